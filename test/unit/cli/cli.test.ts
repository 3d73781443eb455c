import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PATHS } from '../../../src/state/workspace';
import { cli, jsonl, listFiles, tmpdir, write } from '../helpers';

const history = (n: number, agent = 'bug-fixer') => ({
  invocations: Array.from({ length: n }, (_, i) => ({ agent_name: agent, config: { priority: 'critical' }, timestamp: `2025-10-21T14:${10 + i}:00Z`, result: 'failed', reason: 'Type-check failed' })),
});

describe('loop-guardian CLI (a real process)', function () {
  this.timeout(60_000);
  let ws: string;
  beforeEach(async () => {
    ws = await tmpdir();
  });
  afterEach(() => fs.rm(ws, { recursive: true, force: true }));

  describe('check (seed 000)', () => {
    it('continues on a first invocation, with exit 0', async () => {
      const r = await cli(['check', '--workspace', ws, '--agent', 'bug-fixer', '--config', '{"priority":"critical"}']);
      assert.equal(r.code, 0);
      assert.deepEqual(JSON.parse(r.stdout), {
        loop_detected: false,
        invocation_count: 0,
        max_allowed: 3,
        action: 'continue',
        message: 'First invocation - no loop detected',
        diagnostic_info: { recent_invocations: [], pattern: 'No previous invocations', suspected_cause: 'N/A' },
      });
      assert.deepEqual(await listFiles(ws), [], 'a check that continues writes nothing');
    });

    it('halts with exit 1 and archives the diagnostic', async () => {
      await write(ws, PATHS.invocationHistory, JSON.stringify(history(3)));
      const r = await cli(['check', '--workspace', ws, '--agent', 'bug-fixer', '--config', '{"priority":"critical"}']);
      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout) as { action: string; invocation_count: number };
      assert.equal(out.action, 'halt');
      const archived = (await listFiles(ws)).filter((f) => /infinite-loop-.*\.json$/.test(f));
      assert.equal(archived.length, 1);
      const diag = JSON.parse(await fs.readFile(path.join(ws, archived[0] as string), 'utf8')) as { agent_name: string; loop_detected: boolean };
      assert.equal(diag.loop_detected, true);
      assert.match(await fs.readFile(path.join(ws, PATHS.guardianLog), 'utf8'), /^\[\d{4}-[^\]]+\] \[ERROR\] infinite loop: bug-fixer/);
    });

    it('respects --max-repeats and the threshold in the config file', async () => {
      await write(ws, PATHS.invocationHistory, JSON.stringify(history(2, 'dependency-auditor')));
      const args = ['check', '--workspace', ws, '--agent', 'dependency-auditor', '--config', '{"priority":"critical"}'];
      assert.equal((await cli(args)).code, 0);
      assert.equal((await cli([...args, '--max-repeats', '2'])).code, 1);
      await write(ws, PATHS.config, JSON.stringify({ signals: { 'repeated-invocation': { threshold: 2 } } }));
      assert.equal((await cli(args)).code, 1);
    });

    it('treats a corrupt history as empty, with a warning naming the file', async () => {
      await write(ws, PATHS.invocationHistory, '{"invocations": [ nope');
      const r = await cli(['check', '--workspace', ws, '--agent', 'a', '--config', '{}']);
      assert.equal(r.code, 0);
      assert.match(r.stderr, /invocation-history\.json:1: \(file\): not JSON/);
    });

    it('rejects bad input with exit 2 and a clear message', async () => {
      const noAgent = await cli(['check', '--workspace', ws, '--config', '{}']);
      assert.equal(noAgent.code, 2);
      assert.match(noAgent.stderr, /--agent is required/);
      const badJson = await cli(['check', '--workspace', ws, '--agent', 'a', '--config', '{nope']);
      assert.equal(badJson.code, 2);
      assert.match(badJson.stderr, /--config: not JSON/);
      const unknown = await cli(['check', '--workspace', ws, '--agent', 'a', '--config', '{}', '--bogus']);
      assert.equal(unknown.code, 2);
    });

    it('records invocations, concurrently, without losing any', async () => {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => cli(['record', '--workspace', ws, '--agent', `w${i}`, '--config', '{}', '--result', 'failed', '--reason', 'Build failed'])),
      );
      const doc = JSON.parse(await fs.readFile(path.join(ws, PATHS.invocationHistory), 'utf8')) as { invocations: { agent_name: string }[] };
      assert.deepEqual(doc.invocations.map((i) => i.agent_name).sort(), ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']);
    });
  });

  describe('replay', () => {
    it('prints the documented JSON shape', async () => {
      const log = await write(
        ws,
        'loop.jsonl',
        jsonl([
          { type: 'tool', session: 's1', agent: 'coder', tool: 'apply_code_edit', args: { file: 'a.py' }, error: 'search string not found' },
          { type: 'tool', session: 's1', agent: 'coder', tool: 'apply_code_edit', args: { file: 'a.py' }, error: 'search string not found' },
          { type: 'tool', session: 's1', agent: 'coder', tool: 'apply_code_edit', args: { file: 'a.py' }, error: 'search string not found' },
        ]) + 'not json\n',
      );
      const r = await cli(['replay', log, '--json', '--workspace', ws]);
      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout) as { events: number; skipped: number; findings: Record<string, unknown>[] };
      assert.equal(out.events, 3);
      assert.equal(out.skipped, 1);
      assert.match(r.stderr, /loop\.jsonl:4: \(line\): not JSON/);
      const identical = out.findings.find((f) => f.signal === 'identical-calls');
      assert.ok(identical);
      assert.deepEqual(Object.keys(identical).sort(), ['action', 'agent', 'count', 'event', 'evidence', 'line', 'recommendation', 'session', 'signal', 'task', 'threshold']);
      assert.deepEqual([identical.action, identical.count, identical.threshold, identical.event, identical.line, identical.session, identical.task, identical.agent], ['halt', 3, 3, 3, 3, 's1', null, 'coder']);
      assert.deepEqual(identical.evidence, [1, 2, 3].map((n) => ({ file: log, line: n, event: n })));
      assert.deepEqual(out.findings.map((f) => f.signal).sort(), ['failing-call', 'identical-calls', 'repeated-error', 'repeated-error']);
      // One loop: the four findings are one incident, by their indices in `findings`.
      const { incidents } = JSON.parse(r.stdout) as { incidents: { action: string; session: string; findings: number[]; lead: number; signals: string[]; evidence: unknown[] }[] };
      assert.equal(incidents.length, 1);
      assert.deepEqual([incidents[0]?.action, incidents[0]?.session, [...(incidents[0]?.findings ?? [])].sort()], ['halt', 's1', [0, 1, 2, 3]]);
      assert.equal(out.findings[incidents[0]?.lead ?? -1]?.action, 'halt');
      const text = await cli(['replay', log, '--workspace', ws]);
      assert.match(text.stdout, /1 loop\(s\) from 4 finding\(s\)/);
      assert.equal(text.stdout.match(/^HALT /gm)?.length, 1, 'one block for the one loop');
      assert.match(text.stdout, /the same loop also tripped: /);
    });

    it('says each loop at its latest count, as the editor does (found at the 3rd repeat, gone on to the 11th), and each signal once', async () => {
      const fail = { type: 'tool', session: 's1', tool: 'Bash', args: { command: 'npm run build-missing' }, ok: false, error: 'npm error Missing script: "build-missing"' };
      const log = await write(ws, '.tmp/current/logs/eleven.jsonl', jsonl([...Array.from({ length: 11 }, () => fail), { type: 'tool', session: 's1', tool: 'Bash', args: { command: 'npm run build' }, ok: true, output: 'built' }]));
      for (const where of [['replay', log], ['scan']]) {
        const text = await cli([...where, '--workspace', ws]);
        const block = text.stdout.slice(text.stdout.indexOf('HALT'));
        assert.match(block, /failed 11 times with the same error/, `${where[0]}: ${text.stdout}`);
        assert.doesNotMatch(block, /\b3 times/);
        const also = /also tripped: (.*)/.exec(block)?.[1] ?? '';
        const signals = [...also.matchAll(/([\w-]+) \(/g)].map((m) => m[1]);
        assert.ok(signals.length >= 2, also);
        assert.equal(new Set(signals).size, signals.length, `each signal once: ${also}`);
        assert.doesNotMatch(also, /warn/, 'a warning that became a halt is the halt');
      }
      await fs.rm(log);
    });

    it('--jsonl writes each finding as a JSON line as it is raised (--json lists the same, as they stood at the end), and says what it read on stderr', async () => {
      const call = { type: 'tool', session: 's1', tool: 'apply_code_edit', args: { file: 'a.py' }, error: 'search string not found' };
      const log = await write(ws, 'loop.jsonl', jsonl([call, call, call, { type: 'user', session: 's1', text: 'again' }, call, call, call]) + 'not json\n');
      const whole = await cli(['replay', log, '--json', '--workspace', ws]);
      const r = await cli(['replay', log, '--jsonl', '--workspace', ws]);
      assert.equal(r.code, 1, 'a halt finding: exit 1, as with --json');
      const lines = r.stdout.split('\n');
      assert.equal(lines.pop(), '', 'every line ends with a newline');
      // The same findings; --jsonl says each as it was raised, --json as it stood at the end (its
      // pattern went on: a count as large or larger, its latest evidence).
      type Out = { signal: string; action: string; session: string; count: number };
      const streamed = lines.map((l) => JSON.parse(l) as Out);
      const listed = (JSON.parse(whole.stdout) as { findings: Out[] }).findings;
      const who = (f: Out) => `${f.signal}|${f.action}|${f.session}`;
      assert.deepEqual(streamed.map(who), listed.map(who));
      assert.ok(streamed.every((f, i) => (listed[i]?.count ?? 0) >= f.count));
      assert.ok(streamed.some((f, i) => (listed[i]?.count ?? 0) > f.count), 'a loop that went on is listed at its latest count');
      assert.equal(lines.length, 8, 'both loops, each finding once');
      assert.match(r.stderr, /loop\.jsonl:8: \(line\): not JSON/);
      assert.match(r.stderr, /loop\.jsonl: 7 event\(s\) \(events\), 1 line\(s\) skipped, 8 finding\(s\)\n$/);
      const quiet = await write(ws, 'quiet.jsonl', jsonl([{ type: 'output', text: 'a' }, { type: 'output', text: 'b' }]));
      const none = await cli(['replay', quiet, '--jsonl', '--workspace', ws]);
      assert.deepEqual([none.code, none.stdout], [0, '']);
      const both = await cli(['replay', log, '--jsonl', '--json', '--workspace', ws]);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /--json and --jsonl: one or the other/);
    });

    it('loads the schema library only for what needs it: not for a log of well-formed events', async () => {
      // Which modules the process loaded, written at its exit by a module it is started with.
      const probe = await write(ws, 'probe.js', "process.on('exit', () => require('fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify(Object.keys(require.cache))));");
      const loaded = async (args: string[]): Promise<string[]> => {
        const out = path.join(ws, `loaded-${Math.random()}.json`);
        const r = await cli(args, { env: { NODE_OPTIONS: `--require ${probe}`, PROBE_OUT: out } });
        assert.ok(r.code === 0 || r.code === 1, r.stderr);
        return JSON.parse(await fs.readFile(out, 'utf8')) as string[];
      };
      const schemaLoaded = (modules: string[]) => modules.some((m) => /[\\/](cli-zod\.js$|zod[\\/])/.test(m));
      const calls = jsonl([1, 2, 3].map(() => ({ type: 'tool', session: 's', tool: 'ls', args: { d: '.' }, ts: '2026-01-01T00:00:00.000Z' })));
      const good = await write(ws, 'good.jsonl', calls);
      const goodRun = await loaded(['replay', good, '--jsonl', '--workspace', ws]);
      assert.ok(goodRun.some((m) => m.endsWith('cli-main.js')), 'the probe sees the CLI load');
      assert.equal(schemaLoaded(goodRun), false, goodRun.join('\n'));
      // A line the fast path does not take is explained by the schema; so is a config file.
      const bad = await write(ws, 'bad.jsonl', `${calls}{"v":1,"type":"tool"}\n`);
      assert.equal(schemaLoaded(await loaded(['replay', bad, '--jsonl', '--workspace', ws])), true);
      await write(ws, PATHS.config, JSON.stringify({ signals: { cycle: { threshold: 4 } } }));
      assert.equal(schemaLoaded(await loaded(['replay', good, '--jsonl', '--workspace', ws])), true);
    });

    it('reads the last line of a finished log even without a newline', async () => {
      const log = await write(ws, 'l.jsonl', jsonl([{ type: 'output', text: 'x' }, { type: 'output', text: 'x' }]).trimEnd());
      const out = JSON.parse((await cli(['replay', log, '--json'])).stdout) as { events: number; findings: unknown[] };
      assert.equal(out.events, 2);
      assert.equal(out.findings.length, 1);
    });

    it('detects seed 000 history files and takes --config', async () => {
      const file = await write(ws, 'h.json', JSON.stringify(history(3), null, 2));
      const r = await cli(['replay', file, '--json']);
      const out = JSON.parse(r.stdout) as { events: number; findings: { signal: string; line: number }[] };
      assert.equal(out.events, 3);
      assert.deepEqual(out.findings.map((f) => [f.signal, f.line]), [['repeated-invocation', 21]]);
      const cfg = await write(ws, 'cfg.json', JSON.stringify({ signals: { 'repeated-invocation': { threshold: 4 } } }));
      assert.equal(JSON.parse((await cli(['replay', file, '--json', '--config', cfg])).stdout).findings.length, 0);
    });

    it('fails with exit 3 naming a missing file', async () => {
      const r = await cli(['replay', path.join(ws, 'nope.jsonl')]);
      assert.equal(r.code, 3);
      assert.match(r.stderr, /nope\.jsonl/);
    });
  });

  describe('scan', () => {
    it('reads every log under .tmp, reports findings, skipped lines and STOP_ALL', async () => {
      await write(ws, '.tmp/current/logs/agent.jsonl', jsonl([1, 2, 3].map(() => ({ type: 'tool', session: 's', tool: 'ls', args: { d: '.' }, ok: true, output: 'a.ts' }))) + '{"v":1,"type":"nope"}\n');
      await write(ws, '.tmp/other/logs/b.jsonl', jsonl([{ type: 'output', text: 'fine' }]));
      await write(ws, '.tmp/current/notlogs/c.jsonl', jsonl(Array.from({ length: 3 }, () => ({ type: 'tool', tool: 'x', args: {} }))));
      await write(ws, PATHS.stopAll, 'PAUSE 2026-11-22T10:00:00Z\nreason: lunch\n');
      const r = await cli(['scan', '--workspace', ws, '--json']);
      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout) as { stop: { status: string; reason: string }; files: string[]; events: number; skipped: number; skipped_lines: { line: number; field: string }[]; findings: { signal: string; active: boolean; file: string }[] };
      assert.deepEqual(out.stop, { status: 'PAUSE', timestamp: '2026-11-22T10:00:00Z', reason: 'lunch' });
      // The invocation history is a log read only where there is one (there is none here).
      assert.deepEqual(out.files, ['.tmp/current/logs/agent.jsonl', '.tmp/other/logs/b.jsonl']);
      assert.equal(out.events, 4);
      assert.equal(out.skipped, 1);
      assert.deepEqual(out.skipped_lines.map((s) => [s.line, s.field]), [[4, 'type']]);
      assert.ok(out.findings.some((f) => f.signal === 'identical-calls' && f.active && f.file === '.tmp/current/logs/agent.jsonl'));
      const human = await cli(['scan', '--workspace', ws]);
      assert.match(human.stdout, /STOP_ALL {2}PAUSE/);
      assert.match(human.stdout, /HALT {5}identical-calls/);
    });

    it('says so when all is well, with exit 0', async () => {
      const r = await cli(['scan', '--workspace', ws]);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /No loops detected/);
    });

    it('reports an invalid config key on stderr and still scans with the defaults', async () => {
      await write(ws, PATHS.config, JSON.stringify({ signals: { cycle: { threshold: -1 } } }));
      const r = await cli(['scan', '--workspace', ws]);
      assert.equal(r.code, 0);
      assert.match(r.stderr, /config\.json: error: signals\.cycle\.threshold/);
    });
  });

  describe('tasks (seed 003)', () => {
    const attempts = (task: string, tier: number, n: number) =>
      Array.from({ length: n }, () => ({ type: 'attempt', task, tier, ok: false, error: "TypeError: Cannot read property 'map' of undefined", description: 'Implement React component with data fetching' }));

    it('analyze agrees with the editor: a task whose agent retries the same failing edit is a loop (exit 1, said on stderr) though its attempts show none', async () => {
      const edit = (i: number) => ({ type: 'tool', session: 's', task: 'edit-task', tool: 'apply_code_edit', id: `e${i}`, args: { file_path: 'src/a.ts', search: 'foo()' }, ok: false, error: 'search text not found' });
      await write(ws, '.tmp/current/logs/agent.jsonl', jsonl([0, 1, 2].map(edit)));
      const r = await cli(['analyze', 'edit-task', '--workspace', ws]);
      assert.equal(JSON.parse(r.stdout).pattern_type, 'none', "seed 003's own analysis of attempts");
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^loop going on in task edit-task \(.*failing-call.*\): .*apply_code_edit src\/a\.ts: search "foo\(\)"/);
    });

    it('analyzes, escalates, breaks, lists and cleans up a task', async () => {
      await write(ws, '.tmp/current/logs/tasks.jsonl', jsonl(attempts('abc12345', 2, 4)));
      const analysis = await cli(['analyze', 'abc12345', '--workspace', ws]);
      assert.equal(analysis.code, 1);
      assert.deepEqual(JSON.parse(analysis.stdout), {
        task_id: 'abc12345',
        pattern_type: 'repeated_error',
        attempt_count: 4,
        current_tier: 2,
        repeated_error_count: 4,
        latest_error: "TypeError: Cannot read property 'map' of undefined",
        suggested_action: 'Force escalate 2 tiers (skip ineffective middle tier)',
      });

      const esc = await cli(['escalate', 'abc12345', '--workspace', ws, '--reason', 'Repeated error at tier 2']);
      assert.equal(esc.code, 0);
      assert.equal(esc.stdout, '✓ Escalated to tier 4\n');
      const state = JSON.parse(await fs.readFile(path.join(ws, PATHS.tasks, 'abc12345.json'), 'utf8')) as { tier: number; tier_history: unknown[] };
      assert.equal(state.tier, 4);
      assert.equal(state.tier_history.length, 1);

      const brk = await cli(['break', 'abc12345', '--workspace', ws, '--reason', 'Fundamental code issue']);
      assert.equal(brk.code, 0);
      assert.match(brk.stdout, /TASK BLOCKED/);
      assert.match(brk.stdout, /Blocked Reason: Fundamental code issue/);
      const summary = await fs.readFile(path.join(ws, PATHS.summaries, 'abc12345-summary.txt'), 'utf8');
      assert.match(summary, /Implement React component with data fetching/);

      const status = await cli(['status', '--workspace', ws]);
      assert.match(status.stdout, /Blocked Tasks: 1/);
      assert.match(status.stdout, /abc12345\s+\| Attempts: 4\s+\| Tier: 4\s+\| Pattern: repeated_error/);
      assert.equal((JSON.parse((await cli(['status', '--workspace', ws, '--json'])).stdout) as { blocked: unknown[] }).blocked.length, 1);

      const clean = await cli(['cleanup', 'abc12345', '--workspace', ws]);
      assert.equal(clean.stdout, '✓ Cleaned up task abc12345\n');
      assert.match((await cli(['status', '--workspace', ws])).stdout, /Blocked Tasks: 0/);
      assert.deepEqual((await listFiles(path.join(ws, '.tmp/guardian'))).filter((f) => !f.endsWith('.log')), ['blocked.json']);
    });

    it('answers HUMAN_INTERVENTION_REQUIRED with exit 4 at the top tiers', async () => {
      await write(ws, '.tmp/current/logs/tasks.jsonl', jsonl(attempts('t6', 6, 3)));
      const r = await cli(['escalate', 't6', '--workspace', ws]);
      assert.equal(r.code, 4);
      assert.match(r.stdout, /HUMAN_INTERVENTION_REQUIRED/);
    });

    it('keeps concurrent escalations of one task all in its history', async () => {
      await Promise.all(Array.from({ length: 3 }, () => cli(['escalate', 'multi', '--workspace', ws])));
      const state = JSON.parse(await fs.readFile(path.join(ws, PATHS.tasks, 'multi.json'), 'utf8')) as { tier: number; tier_history: { from: number; to: number }[] };
      assert.deepEqual(state.tier_history.map((h) => [h.from, h.to]), [[1, 3], [3, 5], [5, 7]]);
    });

    it('refuses a task id that would escape the workspace', async () => {
      const r = await cli(['break', '../../etc', '--workspace', ws]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /invalid task id/);
      assert.deepEqual(await listFiles(ws), []);
    });
  });

  describe('STOP_ALL commands', () => {
    for (const [cmd, status] of [['stop', 'STOP'], ['pause', 'PAUSE'], ['clear', 'CLEAR']] as const) {
      it(`${cmd} writes ${status}`, async () => {
        const r = await cli([cmd, '--workspace', ws, '--reason', 'because', '--json']);
        assert.equal(r.code, 0);
        const text = await fs.readFile(path.join(ws, PATHS.stopAll), 'utf8');
        assert.match(text, new RegExp(`^${status} \\d{4}-\\d\\d-\\d\\dT[^ ]+Z\\nreason: because\\n`));
        assert.equal((JSON.parse(r.stdout) as { status: string }).status, status);
      });
    }

    it('refuses to write through a link that leaves the workspace (exit 3)', async () => {
      const outside = await tmpdir('lg-out-');
      try {
        await fs.mkdir(path.join(ws, '.github'));
        await fs.symlink(outside, path.join(ws, '.github', 'guardian'));
        const r = await cli(['stop', '--workspace', ws]);
        assert.equal(r.code, 3);
        assert.match(r.stderr, /outside the workspace/);
        assert.deepEqual(await fs.readdir(outside), []);
      } finally {
        await fs.rm(outside, { recursive: true, force: true });
      }
    });
  });

  describe('help and errors', () => {
    it('prints help for the tool and for each command', async () => {
      const top = await cli(['--help']);
      assert.equal(top.code, 0);
      for (const c of ['check', 'scan', 'replay', 'analyze', 'break', 'escalate', 'status', 'cleanup', 'stop', 'pause', 'clear']) assert.match(top.stdout, new RegExp(`\\n  ${c} `));
      const sub = await cli(['replay', '--help']);
      assert.match(sub.stdout, /Usage: loop-guardian replay FILE/);
    });

    it('fails with exit 2 on an unknown command or no command, suggesting the command a typo meant', async () => {
      const unknown = await cli(['frobnicate']);
      assert.equal(unknown.code, 2);
      assert.doesNotMatch(unknown.stderr, /did you mean/);
      const typo = await cli(['scna']);
      assert.equal(typo.code, 2);
      assert.match(typo.stderr, /unknown command "scna"; did you mean 'scan'\?/);
      assert.match((await cli(['stat'])).stderr, /did you mean 'status'\?/);
      assert.equal((await cli([])).code, 2);
    });

    it('fails with exit 2 on a workspace that is not a folder', async () => {
      const r = await cli(['scan', '--workspace', path.join(ws, 'missing')]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /is not a directory/);
    });

    it('uses no colour under NO_COLOR', async () => {
      await write(ws, '.tmp/current/logs/a.jsonl', jsonl([1, 2, 3].map(() => ({ type: 'tool', tool: 'ls', args: {} }))));
      const r = await cli(['scan', '--workspace', ws]);
      assert.doesNotMatch(r.stdout, /\u001b\[/);
    });
  });
});
