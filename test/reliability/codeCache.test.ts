import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readJsonl, refusedByStop, runHook, tmpdir, write, type CliRun } from '../unit/helpers';

/*
 * The hook's code cache (issue 10): its bundle runs compiled from a V8 code cache in the user's
 * cache folder. The cache may speed the hook up; nothing in its place may change a decision, hang
 * the hook or crash it.
 */

const STOP = 'STOP 2026-11-23T10:00:00Z\nreason: runaway agent\nby: a person\n';

function pre(ws: string, command: string) {
  return JSON.stringify({ session_id: 'S', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: command });
}

function hook(ws: string, cache: string, command: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runHook(ws, 'claude', pre(ws, command), [], { timeoutMs: 15_000, env: { LOOP_GUARDIAN_HOME: cache, ...env } });
}

async function cacheFiles(cache: string): Promise<string[]> {
  return (await fs.readdir(path.join(cache, 'cache')).catch(() => [] as string[])).filter((f) => f.endsWith('.cache'));
}

describe('reliability: the hook code cache', function () {
  this.timeout(120_000);

  it('is written by the first call, used by the next, and decides nothing', async () => {
    const ws = await tmpdir('lg-cc-');
    const cache = await tmpdir('lg-cc-home-');
    const first = await hook(ws, cache, 'ls');
    assert.equal(first.code, 0, first.stderr);
    const files = await cacheFiles(cache);
    assert.equal(files.length, 1, 'one cache file for the hook bundle');
    const [file] = files as [string];
    const written = await fs.stat(path.join(cache, 'cache', file));
    assert.ok(written.size > 10_000);
    assert.equal(((await fs.stat(path.join(cache, 'cache'))).mode & 0o777).toString(8), '700', 'a folder only its user reads');
    const second = await hook(ws, cache, 'pwd');
    assert.equal(second.code, 0, second.stderr);
    assert.equal((await fs.stat(path.join(cache, 'cache', file))).mtimeMs, written.mtimeMs, 'an accepted cache is not written again');
    // The same log as without a cache: both calls recorded.
    const log = await readJsonl(path.join(ws, '.tmp/current/logs/hook-claude-S.jsonl'));
    assert.deepEqual(
      log.map((l) => (l.args as { command: string }).command),
      ['ls', 'pwd'],
    );
  });

  it('a corrupt cache is rejected and written again; STOP still refuses', async () => {
    const ws = await tmpdir('lg-cc-');
    const cache = await tmpdir('lg-cc-home-');
    await hook(ws, cache, 'ls');
    const [file] = (await cacheFiles(cache)) as [string];
    const at = path.join(cache, 'cache', file);
    const size = (await fs.stat(at)).size;
    await fs.writeFile(at, Buffer.alloc(size, 7));
    await write(ws, '.github/guardian/STOP_ALL', STOP);
    const r = await hook(ws, cache, 'ls');
    assert.ok(refusedByStop(r), r.stdout + r.stderr);
    assert.notDeepEqual(await fs.readFile(at), Buffer.alloc(size, 7), 'the rejected cache was replaced');
  });

  it('a FIFO in the cache file\'s place, or a file in the cache folder\'s, neither hangs nor stops the hook', async () => {
    const ws = await tmpdir('lg-cc-');
    // A FIFO where the cache file goes (its name from a first run).
    const fifoHome = await tmpdir('lg-cc-home-');
    await hook(ws, fifoHome, 'ls');
    const [file] = (await cacheFiles(fifoHome)) as [string];
    await fs.rm(path.join(fifoHome, 'cache', file));
    execFileSync('mkfifo', [path.join(fifoHome, 'cache', file)]);
    const fromFifo = await hook(ws, fifoHome, 'pwd');
    assert.equal(fromFifo.timedOut, false);
    assert.equal(fromFifo.code, 0, fromFifo.stderr);
    // A file where the cache folder goes: nothing can be cached, the hook runs all the same.
    const fileHome = await tmpdir('lg-cc-home-');
    await write(fileHome, 'cache', 'not a folder\n');
    const noFolder = await hook(ws, fileHome, 'date');
    assert.equal(noFolder.code, 0, noFolder.stderr);
    await write(ws, '.github/guardian/STOP_ALL', STOP);
    assert.ok(refusedByStop(await hook(ws, fileHome, 'date')));
    assert.ok(refusedByStop(await hook(ws, fifoHome, 'date')));
  });

  it('NODE_DISABLE_COMPILE_CACHE turns it off', async () => {
    const ws = await tmpdir('lg-cc-');
    const cache = await tmpdir('lg-cc-home-');
    const r = await hook(ws, cache, 'ls', { NODE_DISABLE_COMPILE_CACHE: '1' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await cacheFiles(cache), []);
  });
});
