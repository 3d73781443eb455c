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
});
