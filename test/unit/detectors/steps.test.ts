import * as assert from 'node:assert/strict';
import { Canonicalizer } from '../../../src/core/canonical';
import { callId, hashHigh, reduceHash } from '../../../src/core/calls';
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

  it('cycle: an A-B cycle of calls whose low hashes collide with others is told by ids', () => {
    const x = (args: object) => read(args, { ok: false, error: 'ENOENT', output: undefined });
    const cycle = [x(a), edit(1), x(a), edit(1), x(a), edit(1)];
    assert.deepEqual(only(run(cycle, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'cycle').map((f) => f.subject), ['read_file → edit (period 2)']);
    const notCycle = [x(a), edit(1), x(b), edit(1), x(a), edit(1)];
    assert.deepEqual(only(run(notCycle).findings, 'cycle'), []);
  });
});
