/**
 * The last `limit` distinct small integers added (0 to 2^31 - 2), as a set: past the limit, the
 * one added longest ago goes. A `Set<number>` with a bound, kept in two arrays of small integers (a
 * table probed linearly, and the values in the order they came), which the collector never has to
 * look into: a signal keeps one per session, it grows with every new call the session makes, and
 * a `Set` of numbers is a hash table whose entries it copies, a new one at every growth.
 *
 * The values are hashes already (a call's `signatureHash`): their low bits are their place.
 */
export class RecentInts {
  /** Each value plus one where it is kept (0: an empty place); never more than half full. */
  private table = zeros(16);
  /** The values as they came, a ring once full: `head` is the oldest. */
  private order: number[] = [];
  private head = 0;
  size = 0;

  constructor(private readonly limit: number) {}

  has(value: number): boolean {
    const table = this.table;
    const mask = table.length - 1;
    const kept = value + 1;
    for (let i = value & mask; ; i = (i + 1) & mask) {
      const x = table[i] as number;
      if (x === kept) return true;
      if (x === 0) return false;
    }
  }

  /**
   * Empties the set, keeping its arrays for what comes next (a session's next turn) unless they
   * grew large: a session that made many calls once does not hold their room for ever.
   */
  clear(): void {
    if (this.table.length > KEPT_TABLE) {
      this.table = zeros(16);
      this.order = [];
    } else this.table.fill(0);
    this.head = 0;
    this.size = 0;
  }

  /** Adds a value that is not there (`has` said so); past the limit, the oldest goes. */
  add(value: number): void {
    if (this.size === this.limit) {
      // Full: the oldest's place in the ring takes the new value.
      this.remove(this.order[this.head] as number);
      this.order[this.head] = value;
      this.head = this.head + 1 === this.limit ? 0 : this.head + 1;
    } else {
      // Filling (the oldest is at 0 until the limit is reached; a place kept from before `clear` is written over).
      this.order[this.size] = value;
    }
    this.size++;
    if (2 * this.size > this.table.length) this.rehash(2 * this.table.length);
    this.place(value);
  }

  private place(value: number): void {
    const table = this.table;
    const mask = table.length - 1;
    let i = value & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = value + 1;
  }

  private rehash(length: number): void {
    const old = this.table;
    this.table = zeros(length);
    for (let i = 0; i < old.length; i++) {
      const x = old[i] as number;
      if (x !== 0) this.place(x - 1);
    }
  }

  /** Takes a value out, moving back the values after it that probed past its place. */
  private remove(value: number): void {
    const table = this.table;
    const mask = table.length - 1;
    let i = value & mask;
    while (table[i] !== value + 1) i = (i + 1) & mask;
    table[i] = 0;
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const x = table[j] as number;
      const home = (x - 1) & mask;
      // x stays where it is when its home is cyclically in (i, j]; else it moves to the gap.
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (!stays) {
        table[i] = x;
        table[j] = 0;
        i = j;
      }
    }
    this.size--;
  }
}

/** The largest table `clear` keeps (1 KB of places: the calls of a turn of about a hundred). */
const KEPT_TABLE = 256;

/** Arrays of zeros by length (powers of two), to copy. */
const ZEROS = new Map<number, readonly number[]>();

/**
 * An array of `n` zeros, packed and exactly `n` long: an array made with a length has holes (and is
 * read as such), one grown by `push` keeps half as much room again as it holds, and a copy is neither.
 */
function zeros(n: number): number[] {
  let made = ZEROS.get(n);
  if (made === undefined) {
    const a: number[] = [];
    for (let i = 0; i < n; i++) a.push(0);
    ZEROS.set(n, (made = a));
  }
  return made.slice();
}
