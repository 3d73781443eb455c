import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CLI, cli, jsonl, tmpdir, write } from '../unit/helpers';

/*
 * The CLI's part of guarantees 3 and 5: replay reads what it is given (pipes, stdin) and fails
 * loudly on what it cannot read; commands whose effect is on disk succeed even when only the log
 * fails; the terminal never receives a log's control characters; a closed pipe ends it quietly.
 */

const LOOP = jsonl([1, 2, 3].map((i) => ({ type: 'tool', tool: 'bash', args: { command: 'make' }, ok: false, error: 'make: *** No rule', session: 's', id: `c${i}` })));

describe('reliability: the CLI on pipes, failures and terminals', function () {
  this.timeout(60_000);

  it('replay reads stdin (-), /dev/stdin and a process substitution, and finds the loop in each', async () => {
    const dir = await tmpdir('lg-cli-');
    const file = await write(dir, 'loop.jsonl', LOOP);
    for (const arg of ['-', '/dev/stdin']) {
      const r = await cli(['replay', arg, '--json'], { input: LOOP, cwd: dir });
      assert.equal(r.code, 1, `${arg}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { events: number }).events, 3);
    }
    const sub = spawnSync('bash', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} replay <(cat ${JSON.stringify(file)}) --json`], { cwd: dir, encoding: 'utf8' });
    assert.equal(sub.status, 1, sub.stderr);
    assert.equal((JSON.parse(sub.stdout) as { events: number }).events, 3);
  });

  it('replay --jsonl keeps no finding: four times the log, the same peak memory (--json keeps them all)', async function () {
    this.timeout(180_000);
    const dir = await tmpdir('lg-cli-');
    // 20 sessions taking turns; every 50th call of a session starts a run of 4 identical failing
    // calls: a few findings for every thousand events, for as long as the log goes on.
    const log = (n: number) =>
      Array.from({ length: n }, (_, i) => {
        const k = Math.floor(i / 20);
        const call = k % 50 < 4 ? { args: { path: 'stuck.ts' }, error: 'ENOENT: no such file stuck.ts' } : { args: { path: `src/f${k}.ts` }, ok: true, output: `line ${k}` };
        return `${JSON.stringify({ v: 1, session: `s${i % 20}`, type: 'tool', tool: 'read_file', ...call })}\n`;
      }).join('');
    await write(dir, 'short.jsonl', log(100_000));
    await write(dir, 'long.jsonl', log(400_000));
    // The peak memory of the CLI's process, written at its exit by a module it is started with; its
    // young generation held at its smallest, which otherwise grows with the length of any run.
    const probe = await write(dir, 'probe.js', "process.on('exit', () => require('fs').writeFileSync(process.env.PROBE_OUT, String(process.resourceUsage().maxRSS)));");
    const peakMB = async (args: string[]) => {
      const out = path.join(dir, 'peak.txt');
      const r = await cli(args, { cwd: dir, env: { NODE_OPTIONS: `--require ${probe} --max-semi-space-size=1`, PROBE_OUT: out }, timeoutMs: 120_000 });
      assert.equal(r.code, 1, r.stderr);
      return { mb: Number(await fs.readFile(out, 'utf8')) / 1024, r };
    };
    const short = await peakMB(['replay', 'short.jsonl', '--jsonl']);
    const long = await peakMB(['replay', 'long.jsonl', '--jsonl']);
    const findings = (run: typeof long) => run.r.stdout.split('\n').length - 1;
    assert.ok(findings(long) > 3.5 * findings(short) && findings(short) > 1000, `${findings(short)} then ${findings(long)} findings`);
    assert.ok(long.mb - short.mb < 20, `--jsonl: ${short.mb.toFixed(0)} MB on 100,000 events, ${long.mb.toFixed(0)} MB on 400,000`);
    const kept = await peakMB(['replay', 'long.jsonl', '--json']);
    assert.ok(kept.mb - long.mb > 40, `--json, which keeps every finding: ${kept.mb.toFixed(0)} MB; --jsonl ${long.mb.toFixed(0)} MB`);
  });

  it("a long replay's young generation grows to 2 × 4 MB and no further; a size given to Node wins", async function () {
    this.timeout(120_000);
    const dir = await tmpdir('lg-cli-');
    const lines = Array.from({ length: 200_000 }, (_, i) => `${JSON.stringify({ v: 1, session: `s${i % 40}`, type: 'tool', tool: 'read_file', args: { path: `src/f${i % 5000}.ts` }, ...(i % 7 === 0 ? { error: 'ENOENT' } : { ok: true, output: `line ${i}` }) })}\n`);
    await write(dir, 'log.jsonl', lines.join(''));
    // The largest the young generation got, written at exit by a module the CLI is started with.
    const probe = await write(
      dir,
      'probe.js',
      "const v8 = require('v8'); let max = 0; const { PerformanceObserver } = require('perf_hooks'); new PerformanceObserver(() => { max = Math.max(max, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size); }).observe({ entryTypes: ['gc'] }); process.on('exit', () => require('fs').writeFileSync(process.env.PROBE_OUT, String(max)));",
    );
    const youngMB = async (nodeOptions: string) => {
      const out = path.join(dir, 'young.txt');
      const r = await cli(['replay', 'log.jsonl', '--jsonl'], { cwd: dir, env: { NODE_OPTIONS: `--require ${probe} ${nodeOptions}`, PROBE_OUT: out }, timeoutMs: 100_000 });
      assert.ok(r.code === 0 || r.code === 1, r.stderr);
      return Number(await fs.readFile(out, 'utf8')) / (1 << 20);
    };
    assert.ok((await youngMB('')) <= 8, 'capped at 2 × 4 MB');
    assert.ok((await youngMB('--max-semi-space-size=8')) > 8, 'the size given to Node is left alone');
  });

  it('replay of a missing file, a folder or a FIFO nothing writes to is exit 3 in one clean line naming it', async () => {
    const dir = await tmpdir('lg-cli-');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    await fs.mkdir(path.join(dir, 'folder'));
    for (const [arg, why] of [
      ['missing.jsonl', /missing\.jsonl: no such file/],
      ['folder', /folder: is a folder/],
      ['pipe', /pipe: nothing to read \(a FIFO that nothing wrote to\)/],
    ] as const) {
      const r = await cli(['replay', arg], { cwd: dir, timeoutMs: 10_000 });
      assert.equal(r.timedOut, false, arg);
      assert.equal(r.code, 3, arg);
      assert.match(r.stderr, why);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '');
    }
  });

  it('stop and break exit 0 once their effect is on disk, warning when only the guardian log failed', async () => {
    const ws = await tmpdir('lg-cli-');
    // A folder where the log file should be: every append to it fails.
    await fs.mkdir(path.join(ws, '.tmp/guardian/guardian.log'), { recursive: true });
    const stop = await cli(['stop', '--reason', 'test', '--workspace', ws]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stderr, /warning: the guardian log .* could not be written/);
    assert.match(await fs.readFile(path.join(ws, '.github/guardian/STOP_ALL'), 'utf8'), /^STOP /);
    await write(ws, '.tmp/current/logs/t.jsonl', jsonl([1, 2, 3].map(() => ({ type: 'tool', tool: 'bash', args: { c: 1 }, ok: false, error: 'E', task: 'T1' }))));
    const brk = await cli(['break', 'T1', '--workspace', ws]);
    assert.equal(brk.code, 0, brk.stderr);
    assert.match(brk.stderr, /warning: the guardian log/);
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/blocked.json'), 'utf8'), /"T1"/);
  });

  it("never prints a log's control characters: an escape sequence in an error reaches the terminal escaped", async () => {
    const ws = await tmpdir('lg-cli-');
    const evil = '\u001b]0;pwned\u0007\u001b[2J';
    await write(ws, '.tmp/current/logs/e.jsonl', jsonl([1, 2, 3].map((i) => ({ type: 'tool', tool: `bash${evil}`, args: {}, ok: false, error: `boom ${evil}`, session: `s${evil}`, id: `e${i}` }))));
    for (const args of [['scan', '--workspace', ws], ['replay', path.join(ws, '.tmp/current/logs/e.jsonl')]]) {
      const r = await cli(args);
      assert.ok(r.stdout.length > 0);
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.stdout + r.stderr), JSON.stringify(r.stdout.slice(0, 300)));
      assert.match(r.stdout, /\\x1b\]0;pwned\\x07/);
    }
  });

  it('a closed pipe ends the CLI quietly (scan | head -1): no trace, the usual exit code', async () => {
    const ws = await tmpdir('lg-cli-');
    await write(ws, '.tmp/current/logs/l.jsonl', LOOP);
    const r = spawnSync('bash', ['-c', `set -o pipefail; ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} scan --workspace ${JSON.stringify(ws)} | head -1; echo "exit \${PIPESTATUS[0]}" >&2`], { encoding: 'utf8' });
    assert.doesNotMatch(r.stderr, /EPIPE|Error|at /);
    assert.match(r.stderr, /exit 1/);
    assert.match(r.stdout, /^Workspace /);
  });
});
