import * as assert from 'node:assert/strict';
import { LinkedOrder, type Linked } from '../../../src/core/linkedOrder';

interface Item extends Linked<Item> {
  readonly n: number;
}

/** The order through the items themselves: the same as a `Set`'s insertion order, item moves included. */
describe('LinkedOrder', () => {
  it('keeps the order a Set keeps, through adds, deletes, moves to the end and deletes of what is not in', () => {
    const items: Item[] = Array.from({ length: 12 }, (_, n) => ({ n, older: undefined, newer: undefined }));
    const order = new LinkedOrder<Item>();
    const set = new Set<Item>();
    const listed = () => {
      const out: number[] = [];
      for (let i = order.first(); i !== undefined; i = i.newer) out.push(i.n);
      return out;
    };
    let seed = 3;
    for (let step = 0; step < 3000; step++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const item = items[seed % items.length] as Item;
      const op = (seed >> 8) % 3;
      if (op === 0 && !set.has(item)) {
        order.add(item);
        set.add(item);
      } else if (op === 1) {
        order.delete(item);
        set.delete(item);
      } else if (op === 2 && set.has(item)) {
        order.moveToEnd(item);
        set.delete(item);
        set.add(item);
      }
      assert.deepEqual(listed(), [...set].map((i) => i.n), `step ${step}`);
      assert.equal(order.size, set.size);
    }
  });
});
