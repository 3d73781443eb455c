import * as assert from 'node:assert/strict';
import { KeyedSlots, SessionSlot, SessionState } from '../../../src/core/detector';

/*
 * The per-task state of the task-keyed signals: kept in each session's slots, bounded over every
 * session together, the key set first going first.
 */
describe('KeyedSlots', () => {
  let slots = 0;
  const ctx = { slot: <T>(make: () => T) => new SessionSlot(slots++, make) };

  it('keeps each session\'s keys apart, and a session\'s keys go with it', () => {
    const tasks = new KeyedSlots<number>(ctx);
    const a = new SessionState('a');
    const b = new SessionState('b');
    tasks.set(a, 't1', 1);
    tasks.set(b, 't1', 2);
    assert.equal(tasks.get(a, 't1'), 1);
    assert.equal(tasks.get(b, 't1'), 2);
    assert.equal(tasks.get(a, 't2'), undefined);
    tasks.deleteSession(a);
    assert.equal(tasks.get(a, 't1'), undefined);
    assert.equal(tasks.get(b, 't1'), 2);
    tasks.delete(b, 't1');
    assert.equal(tasks.get(b, 't1'), undefined);
  });

  it('past its bound, the key set first goes, whichever session it is in; setting a key again does not make it newer', () => {
    const tasks = new KeyedSlots<string>(ctx, 3);
    const a = new SessionState('a');
    const b = new SessionState('b');
    tasks.set(a, 'x', 'a-x');
    tasks.set(b, 'x', 'b-x');
    tasks.set(a, 'y', 'a-y');
    tasks.set(a, 'x', 'a-x again');
    tasks.set(b, 'y', 'b-y');
    assert.equal(tasks.get(a, 'x'), undefined, 'the first key set is the first to go, though set again since');
    assert.deepEqual([tasks.get(b, 'x'), tasks.get(a, 'y'), tasks.get(b, 'y')], ['b-x', 'a-y', 'b-y']);
  });

  it('counts only the keys still kept: keys deleted, and sessions ended, leave room', () => {
    const tasks = new KeyedSlots<number>(ctx, 2);
    const a = new SessionState('a');
    const b = new SessionState('b');
    tasks.set(a, 'x', 1);
    tasks.set(a, 'y', 2);
    tasks.deleteSession(a);
    tasks.set(b, 'x', 3);
    tasks.set(b, 'y', 4);
    assert.deepEqual([tasks.get(b, 'x'), tasks.get(b, 'y')], [3, 4]);
    tasks.delete(b, 'x');
    tasks.set(b, 'z', 5);
    assert.deepEqual([tasks.get(b, 'y'), tasks.get(b, 'z')], [4, 5]);
  });
});
