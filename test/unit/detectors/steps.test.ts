import * as assert from 'node:assert/strict';
import { Canonicalizer } from '../../../src/core/canonical';
import { callId, hashHigh, reduceHash, type SettledCall } from '../../../src/core/calls';
import { CallSteps } from '../../../src/core/detectors/steps';
import { config, only, run } from '../helpers';

/**
 * The window signals keep a session's last calls as numbers (`CallSteps`): a call is named by its
 * id, its signature's whole 53-bit hash, not by its text.
 */
describe('the window signals keep calls as numbers', () => {
  // Two different calls whose 30-bit hashes are equal (found by trying paths; checked below).
  const a = { path: 'src/f34004.ts' };
  const b = { path: 'src/f41493.ts' };
  const canon = new Canonicalizer(config().volatileKeys, config().volatileArgs);
  const id = (args: object) => {
    const hash = canon.signatureHash('read_file', args);
    return callId({ signatureHash: reduceHash(hash), signatureHigh: hashHigh(hash) });
  };
  const read = (args: object, extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool: 'read_file', args, ok: true, output: 'same', ...extra });
  const edit = (n: number) => ({ type: 'tool', session: 's', tool: 'edit', args: { n }, ok: false, error: 'no match' });

  it('an id is the whole hash: two calls whose low 30 bits collide have different ids', () => {
    assert.equal(reduceHash(canon.signatureHash('read_file', a)), reduceHash(canon.signatureHash('read_file', b)));
    assert.equal(id(a), canon.signatureHash('read_file', a));
    assert.notEqual(id(a), id(b));
  });

  it('windowed-repeat: calls whose low hashes collide are different calls', () => {
    const events = [read(a), edit(1), read(b), edit(2), read(a)];
    assert.deepEqual(only(run(events).findings, 'windowed-repeat'), []);
    const same = [read(a), edit(1), read(a), edit(2), read(a)];
    assert.deepEqual(only(run(same).findings, 'windowed-repeat').map((f) => [f.action, f.evidence.map((r) => r.line)]), [['halt', [1, 3, 5]]]);
  });

  it('windowed-repeat: the window is the last calls however long the session (its columns written over)', () => {
    // 25 different calls first (the window of 10 wrapped twice and a half), then the loop.
    const before = Array.from({ length: 25 }, (_, i) => edit(100 + i));
    const events = [...before, read(a), edit(1), read(a), edit(2), read(a)];
    const found = only(run(events).findings, 'windowed-repeat');
    assert.deepEqual(found.map((f) => [f.action, f.evidence.map((r) => r.line)]), [['halt', [26, 28, 30]]]);
    // Spread over 11 steps, the first repeat has left the window.
    const spread = [...before, read(a), edit(1), edit(2), edit(3), edit(4), read(a), edit(5), edit(6), edit(7), edit(8), edit(9), read(a)];
    assert.deepEqual(only(run(spread).findings, 'windowed-repeat'), []);
  });

  it('a window kept for the next turn holds nothing of the last one, wrapped or not', () => {
    const user = { type: 'user', session: 's', text: 'go on' };
    const before = Array.from({ length: 25 }, (_, i) => edit(100 + i));
    for (const earlier of [[], before]) {
      // Two repeats in each turn: no loop (three are), though the window kept its columns.
      const split = [...earlier, read(a), edit(1), read(a), user, read(a), edit(2), read(a)];
      assert.deepEqual(only(run(split).findings, 'windowed-repeat'), []);
      const n = earlier.length;
      const after = [...earlier, read(a), edit(1), read(a), user, read(a), edit(2), read(a), edit(3), read(a)];
      assert.deepEqual(only(run(after).findings, 'windowed-repeat').map((f) => [f.action, f.evidence.map((r) => r.line)]), [['halt', [n + 5, n + 7, n + 9]]]);
      const x = (args: object) => read(args, { ok: false, error: 'ENOENT', output: undefined });
      const cycle = [...earlier, x(a), edit(1), x(a), edit(1), user, x(a), edit(1), x(a), edit(1), x(a)];
      assert.deepEqual(only(run(cycle, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'cycle'), []);
    }
  });

  it('cycle: an A-B cycle of calls whose low hashes collide with others is told by ids', () => {
    const x = (args: object) => read(args, { ok: false, error: 'ENOENT', output: undefined });
    const cycle = [x(a), edit(1), x(a), edit(1), x(a), edit(1)];
    assert.deepEqual(only(run(cycle, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'cycle').map((f) => f.subject), ['read_file → edit (period 2)']);
    const notCycle = [x(a), edit(1), x(b), edit(1), x(a), edit(1)];
    assert.deepEqual(only(run(notCycle).findings, 'cycle'), []);
  });

  it('a step keeps its outcome key whole, of either sign, and its id as the call carries it', () => {
    // Outcome keys are 53-bit integers: an output's at or above zero, an error's below (-1 - hash).
    const keys = [0, 1, 1073741823, 1073741824, 2 ** 53 - 1, -1, -1073741824, -1073741825, -(2 ** 53), undefined];
    const steps = new CallSteps(4);
    keys.forEach((key, n) => {
      const outcome = key === undefined ? { kind: 'unknown' } : key < 0 ? { kind: 'error', key } : { kind: 'ok', key };
      steps.push({ tool: 't', ref: { file: 'f', line: n + 1, event: n + 1 }, signatureHash: n, signatureHigh: 7, outcome } as unknown as SettledCall);
      // The window holds the last four: step 3 is this one.
      const last = Math.min(n, 3);
      assert.equal(steps.key(last), key, `key ${String(key)}`);
      assert.equal(steps.failed(last), key !== undefined && key < 0);
      assert.equal(steps.succeededWith(last), key !== undefined && key >= 0 ? key : undefined);
      assert.ok(steps.is(last, n, 7) && !steps.is(last, n, 8) && !steps.is(last, n + 1, 7));
      assert.equal(steps.ref(0).line, Math.max(1, n - 2));
    });
    assert.equal(steps.count(9, 7), 1);
    assert.equal(steps.count(5, 7), 0);
  });

  it('a step keeps its own file, whether the window\'s steps share one or not, and a cleared window forgets them', () => {
    const steps = new CallSteps(3);
    const push = (file: string, n: number) => steps.push({ tool: 't', ref: { file, line: n, event: n }, signatureHash: n, signatureHigh: 0, outcome: { kind: 'unknown' } } as unknown as SettledCall);
    push('a', 1);
    push('a', 2);
    assert.deepEqual([steps.ref(0).file, steps.ref(1).file], ['a', 'a']);
    push('b', 3);
    push('a', 4);
    // Wrapped: steps 2, 3 and 4 are kept.
    assert.deepEqual([0, 1, 2].map((i) => [steps.ref(i).file, steps.ref(i).line]), [['a', 2], ['b', 3], ['a', 4]]);
    steps.clear();
    push('c', 5);
    assert.deepEqual([steps.length, steps.ref(0).file, steps.ref(0).line], [1, 'c', 5]);
  });

  it('the latest steps of a longer window read as a window of their own, wrapped or not', () => {
    const steps = new CallSteps(7, true);
    const latest = new CallSteps(0);
    for (let n = 0; n < 20; n++) {
      steps.push({ tool: `t${n}`, ref: { file: 'f', line: n, event: n }, signatureHash: n % 4, signatureHigh: 0, outcome: n % 2 === 0 ? { kind: 'ok', key: n } : { kind: 'error', key: -1 - n } } as unknown as SettledCall);
      const view = latest.readLatest(steps, 3);
      const kept = Math.min(n + 1, 3);
      assert.equal(view.length, kept);
      for (let i = 0; i < kept; i++) {
        const m = n - kept + 1 + i;
        assert.deepEqual([view.ref(i).line, view.tool(i), view.key(i), view.failed(i), view.succeededWith(i), view.is(i, m % 4, 0)], [m, `t${m}`, m % 2 === 0 ? m : -1 - m, m % 2 === 1, m % 2 === 0 ? m : undefined, true]);
      }
      // Only the latest three count: the id of the call four back (n % 4) is not among them.
      assert.equal(view.count(n % 4, 0), 1);
      assert.equal(view.latestRepeats(1, 2), false);
      assert.equal(steps.count(n % 4, 0), Math.min(n + 1, 7) >= 5 ? 2 : 1);
    }
  });

  it('windowed-repeat and cycle read one window of the session\'s calls, each as long as it asked: neither changes the other\'s findings', () => {
    // Seeded sessions of a few calls repeated in orders random and cyclic, some failing, with turns.
    let seed = 7;
    const rand = (k: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % k;
    };
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 3000; i++) {
      const session = `s${rand(3)}`;
      if (rand(60) === 0) events.push({ type: 'user', session, text: 'go on' });
      else if (rand(40) === 0) {
        // A unit of 2 to 4 calls, repeated 2 to 4 times, each round ending as the one before.
        const unit = Array.from({ length: 2 + rand(3) }, (_, k) => ({ type: 'tool', session, tool: k % 2 === 0 ? 'bash' : 'edit', args: { n: rand(4), k }, ok: false, error: `e${k}` }));
        for (let r = 2 + rand(3); r > 0; r--) events.push(...unit);
      }
      else if (rand(4) === 0) events.push({ type: 'tool', session, tool: 'edit', args: { n: i % 7 }, ok: true, output: `o${rand(3)}` });
      else events.push({ type: 'tool', session, tool: 'bash', args: { command: `make t${i % 3 === 0 ? rand(5) : i % 2}` }, ...(rand(3) === 0 ? { ok: false, error: 'failed' } : { ok: true, output: `r${rand(2)}` }) });
    }
    const findings = (signal: 'windowed-repeat' | 'cycle', signals: Record<string, unknown>) => only(run(events, config({ signals })).findings, signal).map((f) => [f.action, f.subject, f.evidence.map((r) => r.line).join(',')].join(' '));
    for (const window of [5, 10, 100]) {
      const alone = findings('windowed-repeat', { cycle: { enabled: false }, 'windowed-repeat': { window } });
      assert.ok(alone.length > 0, `windowed-repeat (window ${window}) finds something in the stream`);
      assert.deepEqual(findings('windowed-repeat', { 'windowed-repeat': { window } }), alone, `window ${window}, with cycle`);
    }
    const cycle = findings('cycle', { 'windowed-repeat': { enabled: false } });
    assert.ok(cycle.length > 0, 'cycle finds something in the stream');
    for (const window of [5, 100]) assert.deepEqual(findings('cycle', { 'windowed-repeat': { window } }), cycle, `cycle, with windowed-repeat's window ${window}`);
    // A unit of 25 calls three times is 75: longer than the 60 cycle keeps, within the 100 windowed-repeat asks for.
    const long = Array.from({ length: 75 }, (_, i) => ({ type: 'tool', session: 's', tool: 'bash', args: { command: `make step-${i % 25}` }, ok: false, error: 'failed' }));
    const cycleOf = (signals: Record<string, unknown>) => only(run(long, config({ signals })).findings, 'cycle').length;
    assert.equal(cycleOf({ 'windowed-repeat': { enabled: false }, cycle: { history: 80 } }), 1, 'a history of 80 holds the cycle');
    assert.equal(cycleOf({ 'windowed-repeat': { window: 100 } }), 0, 'cycle reads its own 60, not the window of 100');
  });
});
