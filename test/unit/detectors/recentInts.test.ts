import * as assert from 'node:assert/strict';
import { RecentInts } from '../../../src/core/detectors/recentInts';

/** A bounded set of small integers in typed arrays: the same as a `Set` that drops its oldest past the limit. */
describe('RecentInts', () => {
  // The reference: what failing-call kept before (a Set, its oldest deleted past the limit).
  function compare(limit: number, values: readonly number[], ours = new RecentInts(limit)): void {
    const set = new Set<number>();
    values.forEach((v, n) => {
      assert.equal(ours.has(v), set.has(v), `has(${v}) at ${n}`);
      if (set.has(v)) return;
      ours.add(v);
      set.add(v);
      if (set.size > limit) set.delete(set.values().next().value as number);
      assert.equal(ours.size, set.size);
    });
    for (const v of new Set(values)) assert.equal(ours.has(v), set.has(v), `finally has(${v})`);
  }
  let seed = 7;
  const rand = (k: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };

  it('holds what a bounded Set holds, through growth, eviction and values that share a place', () => {
    // Values that collide in the table (equal low bits), repeats, and more than the limit.
    compare(5, [0, 16, 32, 48, 1, 17, 0, 64, 80, 16, 96, 2, 18, 34]);
    compare(2000, Array.from({ length: 20_000 }, () => rand(3000)));
    compare(37, Array.from({ length: 5_000 }, () => rand(200) * 64));
    compare(100, Array.from({ length: 5_000 }, () => rand(1 << 30)));
  });

  it('takes the largest values a call hash has', () => {
    compare(3, [2 ** 30 - 1, 2 ** 30 - 2, 0, 2 ** 30 - 1, 5, 2 ** 30 - 2]);
  });

  it('after clear, holds nothing, and then what a new one would (its room kept, or let go once large)', () => {
    for (const calls of [50, 5000]) {
      const used = new RecentInts(2000);
      compare(2000, Array.from({ length: calls }, () => rand(1 << 30)), used);
      used.clear();
      assert.equal(used.size, 0);
      compare(2000, Array.from({ length: 3000 }, () => rand(2500)), used);
      used.clear();
      compare(2000, [3, 19, 35, 3, 51], used);
    }
  });
});
