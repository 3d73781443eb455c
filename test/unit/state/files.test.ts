import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { withFileLock, writeFileAtomic } from '../../../src/state/atomicFile';
import { BlockedTaskRegistry, CorruptRegistryError } from '../../../src/state/blockedTaskRegistry';
import { loadConfig } from '../../../src/state/configFile';
import { appendInvocation, MAX_HISTORY, parseInvocationHistory } from '../../../src/state/invocationHistory';
import { StopAllFile } from '../../../src/state/stopAllFile';
import { TaskStateStore } from '../../../src/state/taskStateStore';
import { InvalidTaskIdError, PATHS, Workspace, WorkspaceEscapeError } from '../../../src/state/workspace';
import { listFiles, tmpdir, write } from '../helpers';

describe('workspace files', () => {
  let root: string;
  let ws: Workspace;
  beforeEach(async () => {
    root = await tmpdir();
    ws = new Workspace(root);
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  describe('containment', () => {
    it('refuses paths that climb out of the workspace', async () => {
      await assert.rejects(ws.resolveForWrite('../outside.json'), WorkspaceEscapeError);
      await assert.rejects(ws.resolveForWrite('/etc/passwd'), WorkspaceEscapeError);
    });

    it('refuses paths that leave through a symbolic link, to a folder or to a file', async () => {
      const outside = await tmpdir('lg-outside-');
      try {
        await fs.mkdir(path.join(root, '.github'), { recursive: true });
        await fs.symlink(outside, path.join(root, '.github', 'guardian'));
        await assert.rejects(new StopAllFile(ws).write('STOP'), WorkspaceEscapeError);
        await fs.mkdir(path.join(root, '.tmp', 'guardian'), { recursive: true });
        await fs.symlink(path.join(outside, 'victim.json'), path.join(root, '.tmp', 'guardian', 'blocked.json'));
        await assert.rejects(ws.resolveForWrite(PATHS.registry), WorkspaceEscapeError);
        assert.deepEqual(await fs.readdir(outside), [], 'nothing was written outside');
      } finally {
        await fs.rm(outside, { recursive: true, force: true });
      }
    });

    it('allows links that stay inside', async () => {
      await fs.mkdir(path.join(root, 'real'), { recursive: true });
      await fs.symlink(path.join(root, 'real'), path.join(root, 'alias'));
      assert.equal(await ws.resolveForWrite('alias/x.json'), path.join(root, 'real', 'x.json'));
    });

    it('refuses task ids that are paths', async () => {
      const store = new TaskStateStore(ws);
      for (const bad of ['../x', 'a/b', '.hidden', '', 'x'.repeat(200)]) assert.throws(() => store.relativePath(bad), InvalidTaskIdError, bad);
    });
  });

  describe('atomic writes and locks', () => {
    it('leaves no temporary files behind', async () => {
      const file = path.join(root, 'd', 'f.txt');
      await writeFileAtomic(file, 'one');
      await writeFileAtomic(file, 'two');
      assert.equal(await fs.readFile(file, 'utf8'), 'two');
      assert.deepEqual(await listFiles(root), ['d/f.txt']);
    });

    it('serialises read-modify-write sections', async () => {
      const file = path.join(root, 'counter');
      await fs.writeFile(file, '0');
      await Promise.all(
        Array.from({ length: 20 }, () =>
          withFileLock(file, async () => {
            const n = Number(await fs.readFile(file, 'utf8'));
            await new Promise((r) => setTimeout(r, 1));
            await writeFileAtomic(file, String(n + 1));
          }),
        ),
      );
      assert.equal(await fs.readFile(file, 'utf8'), '20');
    });

    it('breaks a stale lock left by a crashed writer', async () => {
      const file = path.join(root, 'f');
      await fs.writeFile(`${file}.lock`, '99999\n');
      const old = new Date(Date.now() - 60_000);
      await fs.utimes(`${file}.lock`, old, old);
      assert.equal(await withFileLock(file, async () => 'ran', { timeoutMs: 500 }), 'ran');
    });
  });

  describe('invocation history (seed 000)', () => {
    it('is empty when missing or blank, and a safe empty fallback when corrupt', () => {
      assert.deepEqual(parseInvocationHistory(undefined, 'h.json'), { invocations: [], skipped: [], missing: true, corrupt: false });
      assert.equal(parseInvocationHistory('  \n', 'h.json').invocations.length, 0);
      const corrupt = parseInvocationHistory('{\n  "invocations": [\n    {"agent_name": \n', 'h.json');
      assert.equal(corrupt.corrupt, true);
      assert.equal(corrupt.skipped[0]?.file, 'h.json');
      assert.ok((corrupt.skipped[0]?.line ?? 0) >= 3, 'names the line where the JSON breaks');
    });

    it('skips invalid entries, naming the entry, its field and its line', () => {
      const text = '{\n "invocations": [\n  {"agent_name": "a", "config": {}},\n  {"agent_name": "b", "config": "oops"},\n  {"agent_name": "c", "config": {}}\n ]\n}\n';
      const r = parseInvocationHistory(text, 'h.json');
      assert.deepEqual(r.invocations.map((i) => [i.record.agent_name, i.line]), [['a', 3], ['c', 5]]);
      assert.deepEqual(r.skipped.map((s) => [s.line, s.field]), [[4, 'invocations[1].config']]);
    });

    it('appends under a lock, keeping the newest 50 and other keys', async () => {
      await write(root, PATHS.invocationHistory, JSON.stringify({ note: 'mine', invocations: [] }));
      for (let i = 0; i < MAX_HISTORY + 3; i++) await appendInvocation(ws, PATHS.invocationHistory, { agent_name: 'a', config: { i } });
      const doc = JSON.parse(await fs.readFile(path.join(root, PATHS.invocationHistory), 'utf8')) as { note: string; invocations: { config: { i: number } }[] };
      assert.equal(doc.note, 'mine');
      assert.equal(doc.invocations.length, MAX_HISTORY);
      assert.equal(doc.invocations[0]?.config.i, 3);
    });

    it('keeps a corrupt history aside instead of overwriting it', async () => {
      await write(root, PATHS.invocationHistory, '{"invocations": [');
      const r = await appendInvocation(ws, PATHS.invocationHistory, { agent_name: 'a', config: {} });
      assert.ok(r.backup);
      assert.equal(await fs.readFile(r.backup as string, 'utf8'), '{"invocations": [');
    });
  });

  describe('STOP_ALL file (seed 002)', () => {
    it('is CLEAR when missing and reports garbage as CLEAR with the error', async () => {
      const file = new StopAllFile(ws);
      assert.equal((await file.read()).state.status, 'CLEAR');
      await write(root, PATHS.stopAll, 'maybe stop?\n');
      const r = await file.read();
      assert.equal(r.state.status, 'CLEAR');
      assert.equal(r.parse.ok, false);
    });

    it('writes STATUS TIMESTAMP and reads it back', async () => {
      const file = new StopAllFile(ws);
      await file.write('STOP', 'runaway loop');
      const text = await fs.readFile(path.join(root, PATHS.stopAll), 'utf8');
      assert.match(text, /^STOP \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\nreason: runaway loop\n/);
      assert.equal((await file.read()).state.status, 'STOP');
    });
  });

  describe('blocked-task registry (seed 003)', () => {
    const entry = (id: string) => ({
      task_id: id,
      blocked_at: '2026-01-01T00:00:00Z',
      pattern: 'repeated_error' as const,
      attempts: 4,
      tier: 2,
      reason: 'r',
      latest_error: 'e',
      repeated_error_count: 4,
      suggested_action: 's',
      summary_file: `${PATHS.summaries}/${id}-summary.txt`,
    });

    it('adds, replaces and removes tasks with their summaries', async () => {
      const reg = new BlockedTaskRegistry(ws);
      await reg.block(entry('t1'), 'summary 1');
      await reg.block(entry('t2'), 'summary 2');
      await reg.block({ ...entry('t1'), attempts: 5 }, 'summary 1b');
      const listed = await reg.list();
      assert.deepEqual(listed.tasks.map((t) => [t.task_id, t.attempts]), [['t2', 4], ['t1', 5]]);
      assert.equal(await fs.readFile(path.join(root, PATHS.summaries, 't1-summary.txt'), 'utf8'), 'summary 1b');
      assert.equal(await reg.remove('t1'), true);
      assert.equal(await reg.remove('t1'), false);
      assert.deepEqual((await reg.list()).tasks.map((t) => t.task_id), ['t2']);
      await assert.rejects(fs.access(path.join(root, PATHS.summaries, 't1-summary.txt')));
    });

    it('refuses to overwrite a corrupt registry', async () => {
      await write(root, PATHS.registry, '{ broken');
      await assert.rejects(new BlockedTaskRegistry(ws).block(entry('t1'), 's'), CorruptRegistryError);
      assert.equal(await fs.readFile(path.join(root, PATHS.registry), 'utf8'), '{ broken');
      assert.match((await new BlockedTaskRegistry(ws).list()).problems[0] ?? '', /not JSON/);
    });
  });

  describe('config file', () => {
    it('names the line of a JSON syntax error and falls back to the defaults', async () => {
      await write(root, PATHS.config, '{\n  "signals": {\n    "cycle": { "threshold": 4, }\n  }\n}\n');
      const loaded = await loadConfig(ws);
      assert.equal(loaded.config.signals.cycle.threshold, 3);
      assert.match(loaded.problems[0]?.path ?? '', /^line 3, column \d+$/);
    });

    it('applies a valid file', async () => {
      await write(root, PATHS.config, JSON.stringify({ signals: { 'identical-calls': { threshold: 5 } } }));
      assert.equal((await loadConfig(ws)).config.signals['identical-calls'].threshold, 5);
    });

    it('takes the agents to watch from the registry: an unknown one is named and ignored, a known one applies', async () => {
      await write(root, PATHS.config, JSON.stringify({ agents: { claude: { enabled: true }, claud: { enabled: true }, 'swe-agent': { enabled: true }, maxAgeDays: 2 } }));
      const loaded = await loadConfig(ws);
      assert.equal(loaded.config.agents.claude?.enabled, true);
      assert.equal(loaded.config.agents.maxAgeDays, 2);
      assert.deepEqual(loaded.problems.map((p) => p.path), ['agents.claud', 'agents.swe-agent']);
      assert.match(loaded.problems[0]?.message ?? '', /unknown agent, ignored \(.*claude, codex, gemini, copilot, copilot-cli, cursor, qwen, cline, roo, kilo, opencode\)/);
      assert.equal(loaded.config.agents.claud, undefined);
    });
  });
});
