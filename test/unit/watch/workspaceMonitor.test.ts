import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WorkspaceMonitor } from '../../../src/watch/workspaceMonitor';
import { PATHS, Workspace } from '../../../src/state/workspace';
import { config, jsonl, tmpdir, write } from '../helpers';

describe('workspace monitor', () => {
  let root: string;
  let monitor: WorkspaceMonitor;
  const log = '.tmp/current/logs/agent.jsonl';
  const ls = { type: 'tool', session: 's', tool: 'ls', args: { d: '.' } };
  beforeEach(async () => {
    root = await tmpdir();
    monitor = new WorkspaceMonitor(new Workspace(root), config());
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  it('raises a finding when the looping line is appended, and only then', async () => {
    await write(root, log, jsonl([ls, ls]));
    assert.deepEqual((await monitor.poll()).raised, []);
    await fs.appendFile(path.join(root, log), jsonl([ls]));
    const update = await monitor.pollFiles([log]);
    assert.deepEqual(update.raised.map((f) => f.signal), ['identical-calls']);
    assert.equal(monitor.active().length, 1);
    assert.deepEqual((await monitor.pollFiles([log])).raised, [], 'nothing new, nothing raised');
  });

  it('tells a loop found in the middle of a long log at once, not when the log ends', async () => {
    const other = (i: number) => ({ type: 'tool', session: 's', tool: 'read_file', args: { path: `src/f${i}.ts` } });
    await write(root, log, jsonl([ls, ls, ls, ...Array.from({ length: 5000 }, (_, i) => other(i))]));
    const seen: number[] = [];
    await monitor.poll({ onRead: () => seen.push(monitor.stats.events) });
    assert.ok(seen.length >= 2, `told at the loop and at the log's end (${seen.join(', ')})`);
    assert.equal(seen[0], 3, 'told as the third call raised the loop');
    assert.equal(seen.at(-1), 5003);
  });

  it('finds logs created after it started', async () => {
    await monitor.poll();
    await write(root, '.tmp/run-2/logs/new.jsonl', jsonl([ls, ls, ls]));
    assert.equal((await monitor.poll()).raised.length, 1);
  });

  it('counts and reports corrupt lines and goes on reading', async () => {
    await write(root, log, `${jsonl([ls])}{broken\n${jsonl([ls, ls])}`);
    const update = await monitor.poll();
    assert.equal(update.skipped.length, 1);
    assert.equal(update.skipped[0]?.line, 2);
    assert.equal(monitor.skippedCount, 1);
    assert.deepEqual(update.raised.map((f) => f.signal), ['identical-calls']);
  });

  it('counts again from scratch when a log is replaced', async () => {
    await write(root, log, jsonl([ls, ls, ls]));
    await monitor.poll();
    assert.equal(monitor.active().length, 1);
    const tmp = path.join(root, 'replacement');
    await fs.writeFile(tmp, jsonl([ls]));
    await fs.rename(tmp, path.join(root, log));
    await monitor.pollFiles([log]);
    assert.equal(monitor.active().length, 0);
  });

  it('re-checks the invocation history when it changes, raising a finding once', async () => {
    const inv = { agent_name: 'bug-fixer', config: {}, result: 'failed' };
    await write(root, PATHS.invocationHistory, JSON.stringify({ invocations: [inv, inv] }));
    assert.equal((await monitor.poll()).raised.length, 0);
    await write(root, PATHS.invocationHistory, JSON.stringify({ invocations: [inv, inv, inv] }));
    assert.deepEqual((await monitor.pollFiles([PATHS.invocationHistory])).raised.map((f) => f.signal), ['repeated-invocation']);
    assert.equal((await monitor.pollFiles([PATHS.invocationHistory])).raised.length, 0);
    assert.equal(monitor.active().length, 1);
  });

  it('knows which files it watches', () => {
    assert.equal(monitor.watches('.tmp/a/logs/x.jsonl'), true);
    assert.equal(monitor.watches(PATHS.invocationHistory), true);
    assert.equal(monitor.watches('src/x.jsonl'), false);
  });
});
