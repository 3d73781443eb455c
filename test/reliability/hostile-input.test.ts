import * as assert from 'node:assert/strict';
import { MAX_ACTIVE } from '../../src/core/engine';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { classifyError } from '../../src/core/errorClass';
import { resolveConfig } from '../../src/core/config';
import { DEFAULT_DENY_SIGNALS } from '../../src/core/defaults';
import { Workspace } from '../../src/state/workspace';
import { WorkspaceMonitor } from '../../src/watch/workspaceMonitor';
import { cli, config, jsonl, tmpdir, write } from '../unit/helpers';

/**
 * Issue 12, guarantees 3 and 4: input an agent or a repository controls is at worst a skipped
 * line, never a crash or a hang; config repair keeps what is valid.
 */

const BOM = '\uFEFF';
/** A JSON array nested `n` levels deep: 10 KB for 5,000 levels. */
const deep = (n = 5000) => `${'['.repeat(n)}${']'.repeat(n)}`;
const failing = (session: string) => ({ session, type: 'tool', tool: 'bash', args: { cmd: 'make' }, ok: false, error: 'make: *** [all] Error 2' });
/** Three identical failing calls: a halt (identical-calls, failing-call). */
const loop = (session = 's1') => jsonl([failing(session), failing(session), failing(session)]);

describe('hostile input: a skipped line, never a crash or a hang', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tmpdir('lg-hostile-');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  describe('nesting 5,000 levels deep', () => {
    it('an event line is skipped and counted with its line and reason; the rest of the log is read', async () => {
      await write(dir, 'log.jsonl', `{"v":1,"type":"tool","tool":"b","args":{"x":${deep()}}}\n${loop()}`);
      const r = await cli(['replay', 'log.jsonl', '--format', 'events', '--json'], { cwd: dir, timeoutMs: 20_000 });
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as { events: number; skipped: number; findings: unknown[] };
      assert.equal(out.events, 3);
      assert.equal(out.skipped, 1);
      assert.ok(out.findings.length > 0);
      assert.match(r.stderr, /log\.jsonl:1: \(line\): nested deeper than 64 levels/);
    });

    it('an agent transcript line (Claude Code) and a document record (OpenHands) are skipped alone', async () => {
      await write(dir, 'claude.jsonl', `{"type":"user","message":${deep()}}\n`);
      const c = await cli(['replay', 'claude.jsonl', '--format', 'claude', '--json'], { cwd: dir, timeoutMs: 20_000 });
      // Its only line skipped, nothing could be read from it: said so, with exit 5.
      assert.equal(c.code, 5, c.stderr);
      assert.match(c.stderr, /claude\.jsonl: nothing could be read/);
      assert.equal((JSON.parse(c.stdout) as { skipped: number }).skipped, 1);
      assert.match(c.stderr, /claude\.jsonl:1: \(line\): nested deeper than 64 levels/);

      const action = { id: 1, source: 'agent', action: 'run', args: { command: 'make' }, timestamp: '2026-01-01T00:00:00Z' };
      await write(dir, 'oh.json', `[\n${JSON.stringify(action)},\n{"source":"agent","action":"run","args":${deep()}}\n]`);
      const o = await cli(['replay', 'oh.json', '--format', 'openhands', '--json'], { cwd: dir, timeoutMs: 20_000 });
      assert.equal(o.code, 0, o.stderr);
      const out = JSON.parse(o.stdout) as { events: number; skipped: number };
      assert.equal(out.skipped, 1);
      assert.ok(out.events >= 1);
      assert.match(o.stderr, /oh\.json:3: \(document\)\[1\]: nested deeper than 64 levels/);
    });

    it('a config value is reported and replaced by its default; the rest of config.json applies', async () => {
      await write(dir, '.github/guardian/config.json', `{"signals":{"cycle":{"threshold":${deep()}}},"sources":{"events":["logs/*.jsonl"]}}`);
      await write(dir, 'logs/a.jsonl', loop());
      const r = await cli(['scan', '--workspace', dir, '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /signals\.cycle\.threshold: .*the default is used/);
      assert.match(r.stderr, /nested deeper than 64 levels/);
      assert.deepEqual((JSON.parse(r.stdout) as { files: string[] }).files.filter((f) => f.endsWith('.jsonl')), ['logs/a.jsonl']);
    });

    it('a history entry is skipped alone, and record keeps the other entries', async () => {
      const history = '.tmp/current/logs/invocation-history.json';
      const ok = { agent_name: 'fixer', config: { p: 1 }, result: 'failed' };
      await write(dir, history, `{"invocations":[${JSON.stringify(ok)},{"agent_name":"x","config":{"d":${deep()}}}]}`);
      const r = await cli(['record', '--workspace', dir, '--agent', 'fixer', '--config', '{"p":1}', '--result', 'failed', '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 0, r.stderr);
      const kept = (JSON.parse(await fs.readFile(path.join(dir, history), 'utf8')) as { invocations: unknown[] }).invocations;
      assert.deepEqual(kept, [ok, { ...ok, timestamp: (kept[1] as { timestamp: string }).timestamp }]);
      assert.equal((await fs.readdir(path.dirname(path.join(dir, history)))).filter((f) => f.includes('.corrupt-')).length, 1, 'the original is kept beside');
    });

    it('a registry entry is named by status; break refuses with exit 3 and writes nothing', async () => {
      const registry = `{"version":1,"tasks":[{"deep":${deep()}}]}`;
      await write(dir, '.tmp/guardian/blocked.json', registry);
      const s = await cli(['status', '--workspace', dir], { timeoutMs: 20_000 });
      assert.equal(s.code, 0, s.stderr);
      assert.match(s.stderr, /blocked\.json: tasks\[0\]: nested deeper than 64 levels/);
      const b = await cli(['break', 't1', '--workspace', dir], { timeoutMs: 20_000 });
      assert.equal(b.code, 3);
      assert.match(b.stderr, /blocked\.json: tasks\[0\]: nested deeper than 64 levels/);
      assert.equal(await fs.readFile(path.join(dir, '.tmp/guardian/blocked.json'), 'utf8'), registry);
    });

    it('the hook stdin is refused by its parser, not by a stack overflow', async () => {
      const input = `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"x":${deep()}}}`;
      const r = await cli(['hook', 'claude', '--workspace', dir], { input, timeoutMs: 20_000 });
      assert.equal(r.timedOut, false);
      assert.doesNotMatch(r.stderr, /Maximum call stack/);
      assert.match(r.stderr, /nested deeper than 64 levels/);
    });
  });

  describe('errors of megabytes', () => {
    it('a 1 MB "expected expected …" error is classified within a bound (it took 151 s)', async () => {
      const error = 'expected '.repeat(131_072);
      await write(dir, 'r.jsonl', `${JSON.stringify({ v: 1, type: 'tool', tool: 'b', args: {}, ok: false, error })}\n`);
      const r = await cli(['replay', 'r.jsonl', '--format', 'events', '--json'], { cwd: dir, timeoutMs: 5_000 });
      assert.equal(r.timedOut, false, `replay ran past 5 s (${r.ms} ms)`);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { events: number }).events, 1);
    });

    it('classification reads the head and the tail of a long error', () => {
      const filler = 'x'.repeat(1 << 20);
      assert.equal(classifyError(`ECONNRESET ${filler}`), 'network');
      assert.equal(classifyError(`${filler}\nexpected a string, got 3`), 'validation');
      assert.equal(classifyError(`${'expected '.repeat(1 << 17)}`), 'unknown');
    });
  });

  it('a workspace raising 300,000 findings is scanned (the first poll overflowed the stack)', async () => {
    // 1,000 logs of 100 sessions, each looping once: 4 findings a session.
    const logs = path.join(dir, '.tmp/run/logs');
    await fs.mkdir(logs, { recursive: true });
    for (let f = 0; f < 1000; f++) {
      const lines: string[] = [];
      for (let s = 0; s < 100; s++) {
        const e = JSON.stringify({ v: 1, session: `s${f}-${s}`, type: 'tool', tool: 'bash', args: { cmd: `c${s}` }, ok: false, error: `E${s}: boom` });
        lines.push(e, e, e);
      }
      await fs.writeFile(path.join(logs, `a${f}.jsonl`), `${lines.join('\n')}\n`);
    }
    const monitor = new WorkspaceMonitor(new Workspace(dir), config());
    const update = await monitor.poll();
    assert.equal(update.raised.length, 400_000);
    // Every loop was raised; the active list keeps the latest MAX_ACTIVE of them (memory stays bounded).
    assert.equal(monitor.active().length, MAX_ACTIVE);
  });

  describe('a BOM at the start of a file', () => {
    it('costs a log nothing: its first event is read', async () => {
      await write(dir, 'log.jsonl', BOM + loop());
      const r = await cli(['replay', 'log.jsonl', '--format', 'events', '--json'], { cwd: dir, timeoutMs: 20_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(pick(JSON.parse(r.stdout), ['events', 'skipped']), { events: 3, skipped: 0 });
    });

    it('costs an agent transcript nothing (auto-detected, Codex)', async () => {
      const call = (i: number) => [
        { timestamp: `2026-01-01T00:00:0${i}Z`, type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{"command":["make"]}', call_id: `c${i}` } },
        { timestamp: `2026-01-01T00:00:0${i}Z`, type: 'response_item', payload: { type: 'function_call_output', call_id: `c${i}`, output: 'Exit code: 2\nOutput:\nmake: *** Error 2' } },
      ];
      const lines = [0, 1, 2].flatMap(call).map((e) => JSON.stringify(e));
      await write(dir, 'rollout.jsonl', `${BOM}${lines.join('\n')}\n`);
      const r = await cli(['replay', 'rollout.jsonl', '--json'], { cwd: dir, timeoutMs: 20_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { skipped: number }).skipped, 0);
    });

    it('costs config.json nothing: it applies', async () => {
      await write(dir, '.github/guardian/config.json', `${BOM}{"sources":{"events":["logs/*.jsonl"]}}`);
      await write(dir, 'logs/a.jsonl', loop());
      const r = await cli(['scan', '--workspace', dir, '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, '');
    });

    it('costs the history nothing: record keeps its 50 entries', async () => {
      const history = '.tmp/current/logs/invocation-history.json';
      const entries = Array.from({ length: 50 }, (_, i) => ({ agent_name: `a${i}`, config: {}, result: 'success' }));
      await write(dir, history, BOM + JSON.stringify({ invocations: entries }));
      const r = await cli(['record', '--workspace', dir, '--agent', 'fixer', '--config', '{}', '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(pick(JSON.parse(r.stdout), ['kept', 'rotated']), { kept: 50, rotated: 1 });
      const kept = (JSON.parse(await fs.readFile(path.join(dir, history), 'utf8')) as { invocations: Array<{ agent_name: string }> }).invocations;
      assert.deepEqual(kept.map((e) => e.agent_name), [...entries.slice(1).map((e) => e.agent_name), 'fixer']);
    });
  });

  it('registry entries that are null or not objects: break and cleanup work, status names them', async () => {
    await write(dir, '.tmp/guardian/blocked.json', '{"version":1,"tasks":[null,7]}');
    const b = await cli(['break', 't1', '--workspace', dir], { timeoutMs: 20_000 });
    assert.equal(b.code, 0, b.stderr);
    const tasks = (JSON.parse(await fs.readFile(path.join(dir, '.tmp/guardian/blocked.json'), 'utf8')) as { tasks: unknown[] }).tasks;
    assert.deepEqual(tasks.slice(0, 2), [null, 7], 'entries this version does not understand are kept');
    assert.equal((tasks[2] as { task_id: string }).task_id, 't1');
    const s = await cli(['status', '--workspace', dir], { timeoutMs: 20_000 });
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stderr, /tasks\[0\]: .*null/);
    assert.match(s.stderr, /tasks\[1\]: /);
    const c = await cli(['cleanup', 't1', '--workspace', dir], { timeoutMs: 20_000 });
    assert.equal(c.code, 0, c.stderr);
    assert.doesNotMatch(c.stderr, /TypeError|Cannot read/);
  });
});

describe('config repair keeps what is valid', () => {
  it('drops an invalid list entry alone and names it', () => {
    const { config: c, problems } = resolveConfig({ hooks: { deny: ['bad', 'bad2', 'identical-calls'] } });
    assert.deepEqual(c.hooks.deny, ['identical-calls']);
    assert.deepEqual(
      problems.map((p) => [p.path, p.message.replace(/^.*; /, '')]),
      [
        ['hooks.deny.0', '"bad" dropped'],
        ['hooks.deny.1', '"bad2" dropped'],
      ],
    );
  });

  it('a list left empty by repair takes its default, and the message says which', () => {
    const { config: c, problems } = resolveConfig({ hooks: { deny: ['bad'] }, volatileKeys: ['', 'x', 3] });
    assert.deepEqual(c.hooks.deny, DEFAULT_DENY_SIGNALS);
    assert.deepEqual(c.volatileKeys, ['x']);
    const emptied = problems.find((p) => p.path === 'hooks.deny');
    assert.equal(emptied?.message, `no valid entry left; the default ${JSON.stringify(DEFAULT_DENY_SIGNALS)} is used`);
    assert.deepEqual(
      problems.filter((p) => p.path.startsWith('volatileKeys')).map((p) => p.path),
      ['volatileKeys.0', 'volatileKeys.2'],
    );
  });
});

function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}
