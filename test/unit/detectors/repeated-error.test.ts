import * as assert from 'node:assert/strict';
import { only, run } from '../helpers';

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
});
