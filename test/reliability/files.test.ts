import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withFileLock } from '../../src/state/atomicFile';
import { PATHS } from '../../src/state/workspace';
import { cli, jsonl, listFiles, tmpdir, write } from '../unit/helpers';

/** The guardian's leftovers after a failed or concurrent write: lock files and temp files. */
const leftovers = async (root: string) => (await listFiles(root)).filter((f) => /\.(lock|tmp)$|\.acq$|\.break$/.test(f));

const historyLength = async (ws: string) =>
  (JSON.parse(await fs.readFile(path.join(ws, PATHS.invocationHistory), 'utf8')) as { invocations: unknown[] }).invocations.length;

/** A pid that was alive a moment ago and is not any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid as number;
}

/** Mounts a small tmpfs at `dir` (root only); false when this machine does not allow it. */
function mountTmpfs(dir: string, size: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}

interface SwapReport {
  readonly swaps: number;
  /** Files other than temp files seen outside. */
  readonly content: number;
  /** Temp files seen outside (empty: removed by the writer before a byte is written). */
  readonly temps: number;
  /** Files with bytes in them seen outside. */
  readonly written: number;
}

/**
 * A separate process that swaps `dir` for a link to `outside` and back, as fast as it can, and
 * notes what it ever sees in `outside`; `stop()` ends it and returns what it saw.
 */
function raceSwapper(dir: string, outside: string): { stop(): Promise<SwapReport> } {
  const stopFile = path.join(outside, '..', `${path.basename(outside)}.done`);
  const child = spawn(process.execPath, [
    '-e',
    `
    const fs = require('fs');
    const [dir, aside, outside, stopFile] = process.argv.slice(1);
    let swaps = 0, content = 0, temps = 0, written = 0;
    while (!fs.existsSync(stopFile)) {
      try { fs.renameSync(dir, aside); fs.symlinkSync(outside, dir); } catch {}
      for (const name of fs.readdirSync(outside)) {
        if (name.endsWith('.tmp')) temps++;
        else content++;
        try { if (fs.statSync(outside + '/' + name).size > 0) written++; } catch {}
      }
      try { fs.unlinkSync(dir); fs.renameSync(aside, dir); } catch {}
      swaps++;
    }
    process.stdout.write(JSON.stringify({ swaps, content, temps, written }));
    `,
    dir,
    `${dir}.aside`,
    outside,
    stopFile,
  ]);
  let report = '';
  child.stdout.on('data', (d: Buffer) => (report += d.toString()));
  const done = new Promise((resolve) => child.on('close', resolve));
  return {
    async stop() {
      await fs.writeFile(stopFile, '');
      await done;
      await fs.rm(stopFile);
      return JSON.parse(report) as SwapReport;
    },
  };
}

describe('reliability: locks and atomic writes (issue 12, guarantees 2 and 5)', function () {
  this.timeout(120_000);
  let ws: string;
  beforeEach(async () => {
    ws = await tmpdir('lg-files-');
  });

  describe('locks that cannot be stolen', () => {
    const recordAll = (n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => cli(['record', '--workspace', ws, '--agent', `w${i}`, '--config', '{}', '--result', 'failed'])));

    it('40 concurrent record processes over a stale lock keep all 40 records (3 runs)', async () => {
      for (let run = 0; run < 3; run++) {
        await fs.rm(path.join(ws, '.tmp'), { recursive: true, force: true });
        // A lock left 60 s ago by a process that is still alive (this one): only the age rule applies.
        const lock = await write(ws, `${PATHS.invocationHistory}.lock`, `${process.pid}\n`);
        const old = new Date(Date.now() - 60_000);
        await fs.utimes(lock, old, old);
        const runs = await recordAll(40);
        assert.deepEqual(
          runs.filter((r) => r.code !== 0).map((r) => r.stderr),
          [],
        );
        assert.equal(await historyLength(ws), 40, `run ${run}`);
        assert.deepEqual(await leftovers(ws), []);
      }
    });

    it('40 waiters that all find the same stale lock: one wins at a time, no update is lost (10 rounds)', async () => {
      const counter = path.join(ws, 'counter');
      let most = 0;
      for (let round = 0; round < 10; round++) {
        await fs.writeFile(counter, '0');
        const lock = await write(ws, 'counter.lock', `${process.pid}\n`);
        const old = new Date(Date.now() - 60_000);
        await fs.utimes(lock, old, old);
        let inside = 0;
        const waiter = async (startAfterMs: number) => {
          // Staggered starts, so that one waiter's look at the lock and another's takeover interleave.
          await new Promise((resolve) => setTimeout(resolve, startAfterMs));
          await withFileLock(counter, async () => {
            most = Math.max(most, ++inside);
            const n = Number(await fs.readFile(counter, 'utf8'));
            await new Promise((resolve) => setTimeout(resolve, 2));
            await fs.writeFile(counter, String(n + 1));
            inside--;
          });
        };
        await Promise.all(Array.from({ length: 40 }, (_, i) => waiter(i % 10)));
        assert.equal(most, 1, `round ${round}: ${most} waiters held the lock at once`);
        assert.equal(await fs.readFile(counter, 'utf8'), '40', `round ${round}`);
        assert.deepEqual(await leftovers(ws), []);
      }
    });

    it('a lock whose holder is dead on this host is taken at once', async () => {
      for (const content of [`${deadPid()}\n`, JSON.stringify({ pid: deadPid(), host: os.hostname(), token: 'x' })]) {
        await write(ws, `${PATHS.invocationHistory}.lock`, content);
        const r = await cli(['record', '--workspace', ws, '--agent', 'a', '--config', '{}'], { timeoutMs: 20_000 });
        assert.equal(r.code, 0, r.stderr);
        assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
      }
      assert.equal(await historyLength(ws), 2);
      assert.deepEqual(await leftovers(ws), []);
    });

    it('a fresh lock of a live holder on another host is waited for, not taken', async () => {
      await write(ws, `${PATHS.invocationHistory}.lock`, JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', token: 'y' }));
      const r = await cli(['record', '--workspace', ws, '--agent', 'a', '--config', '{}'], { timeoutMs: 30_000 });
      assert.equal(r.code, 3);
      assert.match(r.stderr, /timed out waiting for the lock/);
    });

    it('break and cleanup of one task at the same moment leave it registered with its summary, or neither (20 rounds)', async () => {
      await write(ws, '.tmp/current/logs/tasks.jsonl', jsonl([{ type: 'attempt', task: 'T1', tier: 2, ok: false, error: 'boom' }]));
      const registered = async () => {
        const text = await fs.readFile(path.join(ws, PATHS.registry), 'utf8').catch(() => '{"tasks":[]}');
        return (JSON.parse(text) as { tasks: { task_id: string }[] }).tasks.some((t) => t.task_id === 'T1');
      };
      const hasSummary = () => fs.access(path.join(ws, PATHS.summaries, 'T1-summary.txt')).then(() => true, () => false);
      const inconsistent: string[] = [];
      for (let round = 0; round < 20; round++) {
        const [b, c] = await Promise.all([cli(['break', 'T1', '--workspace', ws]), cli(['cleanup', 'T1', '--workspace', ws])]);
        assert.equal(b.code, 0, b.stderr);
        assert.equal(c.code, 0, c.stderr);
        const [reg, sum] = [await registered(), await hasSummary()];
        if (reg !== sum) inconsistent.push(`round ${round}: registered ${reg}, summary ${sum}`);
      }
      assert.deepEqual(inconsistent, []);
      assert.deepEqual(await leftovers(ws), []);
    });
  });

  describe('atomic writes', () => {
    it('keep the mode of the file they replace (init on a 0600 settings file, stop on a 0640 STOP_ALL)', async () => {
      const settings = await write(ws, '.claude/settings.local.json', '{"env": {"API_KEY": "secret"}}\n');
      await fs.chmod(settings, 0o600);
      const stopAll = await write(ws, PATHS.stopAll, 'CLEAR\n');
      await fs.chmod(stopAll, 0o640);
      assert.equal((await cli(['init', 'claude', '--workspace', ws])).code, 0);
      assert.equal((await cli(['stop', '--workspace', ws])).code, 0);
      assert.match(await fs.readFile(settings, 'utf8'), /API_KEY/);
      assert.match(await fs.readFile(settings, 'utf8'), /hook claude/);
      assert.equal((await fs.stat(settings)).mode & 0o777, 0o600);
      assert.equal((await fs.stat(stopAll)).mode & 0o777, 0o640);
    });

    it('a full disk: the error names the file and ENOSPC, and no .lock or .tmp is left', async function () {
      if (!mountTmpfs(ws, '256k')) this.skip();
      try {
        await write(ws, PATHS.stopAll, 'CLEAR\n');
        await write(ws, `${PATHS.logsDir}/.keep`, '');
        // Fill the disk to the last block.
        await fs.writeFile(path.join(ws, 'filler'), Buffer.alloc(1 << 20)).catch(() => undefined);
        const stop = await cli(['stop', '--workspace', ws]);
        assert.equal(stop.code, 3);
        assert.match(stop.stderr, /cannot write \.github\/guardian\/STOP_ALL: the disk is full \(ENOSPC\)/);
        const rec = await cli(['record', '--workspace', ws, '--agent', 'a', '--config', '{}']);
        assert.equal(rec.code, 3);
        assert.match(rec.stderr, /ENOSPC/);
        assert.deepEqual(await leftovers(ws), []);
        assert.equal(await fs.readFile(path.join(ws, PATHS.stopAll), 'utf8'), 'CLEAR\n');
      } finally {
        spawnSync('umount', [ws]);
      }
    });

    it('a read-only file system: the error says EROFS', async function () {
      await write(ws, PATHS.stopAll, 'CLEAR\n');
      if (spawnSync('mount', ['--bind', ws, ws]).status !== 0) this.skip();
      try {
        if (spawnSync('mount', ['-o', 'remount,bind,ro', ws]).status !== 0) this.skip();
        const stop = await cli(['stop', '--workspace', ws]);
        assert.equal(stop.code, 3);
        assert.match(stop.stderr, /cannot write \.github\/guardian\/STOP_ALL: the file system is read-only \(EROFS\)/);
      } finally {
        spawnSync('umount', [ws]);
      }
    });

    it('stop never writes through a folder swapped for a link outside the workspace (100 tries against a racing swapper)', async () => {
      const outside = await tmpdir('lg-outside-');
      await fs.mkdir(path.join(ws, '.github/guardian'), { recursive: true });
      const swapper = raceSwapper(path.join(ws, '.github/guardian'), outside);
      let ok = 0;
      for (let i = 0; i < 100; i++) if ((await cli(['stop', '--workspace', ws])).code === 0) ok++;
      const { swaps, content, temps } = await swapper.stop();
      assert.ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
      assert.deepEqual(await fs.readdir(outside), []);
      assert.equal(content, 0, `a file other than an empty temp appeared outside ${content} time(s)`);
      console.log(`      (stop: ${ok}/100 succeeded; ${swaps} swaps; an empty temp seen outside ${temps} time(s), always removed)`);
    });

    it('the guardian log is never appended through a folder swapped for a link outside the workspace (100 stops against a racing swapper)', async () => {
      const outside = await tmpdir('lg-outside-');
      await fs.mkdir(path.join(ws, '.tmp/guardian'), { recursive: true });
      const swapper = raceSwapper(path.join(ws, '.tmp/guardian'), outside);
      for (let i = 0; i < 100; i++) await cli(['stop', '--reason', 'race', '--workspace', ws]);
      const { swaps, written } = await swapper.stop();
      assert.ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
      assert.equal(written, 0, 'a log line landed outside the workspace');
      for (const name of await fs.readdir(outside)) assert.equal((await fs.stat(path.join(outside, name))).size, 0, name);
    });
  });
});
