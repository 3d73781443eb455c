import * as assert from 'node:assert/strict';
import { only, run, times } from '../helpers';

const fail = (tool: string, error: string) => ({ type: 'tool', session: 's', tool, args: {}, error });

describe('repeated-error (seeds 001, 003)', () => {
  it('warns at 2 and halts at 3 consecutive failures with the same error of one intent (one tool, no target: its arguments vary)', () => {
    const e = 'TypeError: Cannot read property \'map\' of undefined';
    const found = only(run([1, 2, 3].map((i) => ({ ...fail('apply', e), args: { attempt: i } }))).findings, 'repeated-error');
    assert.deepEqual(found.map((f) => [f.action, f.count, f.at.line]), [['warn', 2, 2], ['halt', 3, 3]]);
    assert.deepEqual(found[1]?.evidence.map((r) => r.line), [1, 2, 3]);
  });

  it("matches seed 003's fuzzy variants of one error", () => {
    const errs = [
      'TypeError: Cannot read property \'map\' of undefined',
      'TypeError: Cannot read properties of undefined (reading \'map\')',
      'TypeError: x.map is not a function',
    ];
    assert.equal(only(run(errs.map((e, i) => ({ ...fail('apply', e), args: { attempt: i } }))).findings, 'repeated-error').at(-1)?.action, 'halt');
  });

  it('is broken by a success', () => {
    const e = 'Error: search string not found in file a.py';
    const events = [fail('a', e), fail('b', e), { type: 'tool', session: 's', tool: 'read_file', args: {}, ok: true, output: 'x' }, fail('c', e)];
    const found = only(run(events).findings, 'repeated-error');
    assert.deepEqual(found.map((f) => f.action), ['warn']);
  });

  it('is broken by a different error', () => {
    const events = [fail('a', 'ENOENT: no such file or directory, open a.txt'), fail('b', 'SyntaxError: Unexpected token }'), fail('c', 'ENOENT: no such file or directory, open a.txt')];
    assert.equal(only(run(events).findings, 'repeated-error').length, 0);
  });

  it('follows a task across its attempts', () => {
    const attempt = (ok: boolean, error?: string) => ({ type: 'attempt', task: 'abc12345', tier: 2, ok, ...(error ? { error } : {}) });
    const e = "TypeError: Cannot read property 'map' of undefined";
    const found = only(run([attempt(false, e), attempt(false, e), attempt(false, e)]).findings, 'repeated-error');
    assert.deepEqual(found.map((f) => [f.action, f.task]), [['warn', 'abc12345'], ['halt', 'abc12345']]);
    assert.match(found[1]?.recommendation ?? '', /Force-escalate 2 tiers/i);
  });

  describe('noise in the error (issue 36)', () => {
    // The same failing command, six runs: each error carries its own clock times, process ids,
    // request id, temporary folder, random numbers and addresses, as a log line does.
    const commands = ['npm run db:migrate', 'npm run db:migrate 2>&1', 'cd /w && npm run db:migrate', 'sleep 1 && npm run db:migrate', 'npm run db:migrate --verbose', 'npm run db:migrate 2>&1 | tail -20'];
    const temp = ['/tmp/tmp.AbC123', '/tmp/tmp.zz9Qx1', '/var/folders/x1/y_2z/T/lg-AbC9dE', '/private/var/folders/x1/y_2z/T/lg-Qq81tz', 'C:\\Users\\dev\\AppData\\Local\\Temp\\tmp-4411-Zq8', '/tmp/tmp.q8R7s6'];
    const noisy = (i: number) =>
      `Nov 27 19:2${i}:${10 + i} box node[${3000 + 977 * i}]: [19:2${i}:${10 + i}.${100 + 131 * i}] pid ${12 + 4001 * i}: Error: connect ECONNREFUSED 127.0.0.1:5432 ` +
      `(request ${['3f2a9c1e-1b2c-4d5e-8f90-a1b2c3d4e5f6', '0aa1bc2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d'][i % 2]}, trace ${(0xa1b2c3d4e5f6 + i).toString(16)}, ` +
      `seed ${(0.8234123412 / (i + 1)).toFixed(10)}, at ${1764271530123 + 15_000 * i}, after ${40 + i}ms, handle 0x7ffd5fbff8${i}c8, PID: ${77 + i}) in ${temp[i]}/x.js`;
    const events = commands.map((command, i) => ({ type: 'tool', session: 's', tool: 'Bash', args: { command }, error: `Exit code 1\n${noisy(i)}` }));

    it('six failures of one command whose errors differ only by their noise halt at the 3rd, quoting the line that says what failed', () => {
      const found = only(run(events).findings, 'repeated-error');
      assert.deepEqual(found.map((f) => [f.action, f.count, f.at.line]), [['warn', 2, 2], ['halt', 3, 3]]);
      // The real text is shown (noise and all), without the exit status before it.
      assert.match(found[1]?.subject ?? '', /^Nov 27 19:22:12 box node\[4954\]: \[19:22:12\.362\] pid 8014: Error: connect ECONNREFUSED 127\.0\.0\.1:5432/);
      assert.match(found[1]?.recommendation ?? '', /connection is refused\. Is the service on 127\.0\.0\.1:5432 \(PostgreSQL's port\) running\?/);
    });

    it("npm's echo of the script is not what it quotes", () => {
      const npm = 'Exit code 1\n\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnectionComplete (node:net:1555:16)\nnpm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T19_31_00_000Z-debug-0.log';
      const [halt] = only(run(times(3, () => ({ type: 'tool', session: 's', tool: 'Bash', args: { command: 'npm run db:migrate' }, error: npm }))).findings, 'repeated-error').filter((f) => f.action === 'halt');
      assert.equal(halt?.subject, 'Error: connect ECONNREFUSED 127.0.0.1:5432');
      assert.equal(halt?.message, 'Bash fails with the same error 3 times in a row: Error: connect ECONNREFUSED 127.0.0.1:5432');
    });

    // An output keeps its numbers (runNoise.ts): a count of six digits that grows is progress.
    it('a healthy edit→test cycle whose error changes, and a poll whose counts grow, halt nothing', () => {
      const test = (got: number) => ({ type: 'tool', session: 's', tool: 'Bash', args: { command: 'npm test' }, error: `Exit code 1\n[19:2${got}:00.123] expected 4, got ${got}` });
      const edit = (n: number) => ({ type: 'tool', session: 's', tool: 'Edit', args: { file_path: 'src/sum.ts', new_string: `v${n}` }, ok: true, output: 'edited' });
      const poll = (rows: number) => ({ type: 'tool', session: 's', tool: 'Bash', args: { command: 'curl -s localhost:8080/progress' }, ok: true, output: `imported ${rows * 250_000} rows so far` });
      const cycle = [test(1), edit(1), test(2), edit(2), test(3), edit(3), test(2), edit(4), ...times(6, (i) => poll(i + 1))];
      assert.deepEqual(run(cycle).findings.filter((f) => f.action === 'halt').map((f) => f.signal), []);
    });
  });
});

