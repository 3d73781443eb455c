import { hashHigh, reduceHash, wholeHash, type SettledCall } from '../calls';
import type { EventRef } from '../events';

/** How a step ended, as its flags keep it (the low two bits); whether its outcome has a key, and whether that key is below zero. */
const UNKNOWN = 0;
const OK = 1;
const ERROR = 2;
const HAS_KEY = 4;
const NEGATIVE = 8;

/** The columns of a step: its call's id and its outcome's key, each as two small integers, its flags, then its event's line and number. */
const WIDTH = 7;

/**
 * A session's last calls, oldest first, as much of each as a window signal needs: the call's id
 * (`callId`: its signature's whole hash), how it ended (its outcome's kind and key), its tool and
 * its event. Kept in columns that are written over when full, not as the calls themselves: a
 * window holds its calls across many events (in a receiver, across every other session's), and
 * what a window holds the collector copies and promotes; a call with its arguments, outcome and
 * event is many objects, a step here is numbers, and its event's file name (one string the
 * session's events share) and tool. Its event is kept as numbers too, and made again when a
 * finding names it: a window that held the events' own objects had to tell the collector of
 * every one it stored (a young object stored in an old one), at every call.
 *
 * Each 53-bit hash is kept as two small integers, its low 30 bits and the rest (as a call carries
 * its id: `signatureHash`, `signatureHigh`), and compared as such: a 53-bit number read out of a
 * column and handed to another function is boxed, one allocation per use, and the window signals
 * compare ids on every call. The columns are an array of small integers (never a pointer the
 * collector must follow, and made as cheaply as any array; a typed array's buffer is outside the
 * heap, and was as slow to make and free as the collector's copying it saved). A window is kept,
 * emptied, from one turn of its session to the next (`clear`).
 *
 * Steps are the same call when their ids are equal: two different calls share an id once in 2^53
 * comparisons, so no call's text is kept, or written, to confirm it.
 */
export class CallSteps {
  /**
   * Per step, seven integers: the call's id (low 30 bits, then the rest), its outcome's key (the
   * same), its flags (kind; whether the key is known, and below zero), its event's line and
   * number. One array (one object per window, a step's numbers side by side), grown to the
   * capacity as the session's calls come: most sessions a receiver keeps make a few calls.
   */
  private readonly cols: number[] = [];
  /** Each step's tool, when the window keeps them (`withTools`). */
  private readonly tools: string[] | undefined;
  private readonly files: string[] = [];
  /** Where the oldest step is, once the window is full. */
  private first = 0;
  length = 0;

  /** `withTools`: whether the window keeps each step's tool (`tool(i)`). */
  constructor(
    readonly capacity: number,
    withTools = false,
  ) {
    this.tools = withTools ? [] : undefined;
  }

  /** Adds the call as the latest step (past the capacity, the oldest goes). */
  push(c: SettledCall): void {
    const o = c.outcome;
    let at: number;
    if (this.length < this.capacity) {
      // Growing (the oldest is at 0 until the window is full).
      at = this.length++;
      // Its place, written below: the columns grow by a step, unless an earlier turn grew them.
      if (WIDTH * at === this.cols.length) for (let k = 0; k < WIDTH; k++) this.cols.push(0);
    } else {
      at = this.first;
      this.first = at + 1 === this.capacity ? 0 : at + 1;
    }
    if (this.tools !== undefined) this.tools[at] = c.tool;
    this.files[at] = c.ref.file;
    const cols = this.cols;
    const base = WIDTH * at;
    cols[base] = c.signatureHash;
    cols[base + 1] = c.signatureHigh;
    cols[base + 5] = c.ref.line;
    cols[base + 6] = c.ref.event;
    const kind = o.kind === 'error' ? ERROR : o.kind === 'ok' ? OK : UNKNOWN;
    const key = o.key;
    // A key is a 53-bit hash, or one below zero (an error's, -1 - hash): kept as the hash, split as a call's is, and its sign.
    const hash = key === undefined ? 0 : key < 0 ? -1 - key : key;
    cols[base + 2] = reduceHash(hash);
    cols[base + 3] = hashHigh(hash);
    cols[base + 4] = key === undefined ? kind : key < 0 ? kind | HAS_KEY | NEGATIVE : kind | HAS_KEY;
  }

  /**
   * Empties the window (a turn ended) and keeps its columns for the session's next turn: most
   * sessions go on, and a window made again would grow its columns again, each growth a new
   * array.
   */
  clear(): void {
    this.length = 0;
    this.first = 0;
  }

  private slot(i: number): number {
    const at = this.first + i;
    return at < this.capacity ? at : at - this.capacity;
  }

  /** Whether steps `i` and `j` are the same call. */
  same(i: number, j: number): boolean {
    const a = WIDTH * this.slot(i);
    const b = WIDTH * this.slot(j);
    const cols = this.cols;
    return cols[a] === cols[b] && cols[a + 1] === cols[b + 1];
  }

  /** Whether step `i` is the call whose id is `hash` (low 30 bits) and `high` (the rest). */
  is(i: number, hash: number, high: number): boolean {
    const at = WIDTH * this.slot(i);
    return this.cols[at] === hash && this.cols[at + 1] === high;
  }

  /**
   * Whether the latest step is the same call as one of the steps `from` to `to` back (a cycle of
   * period p ends with the call p steps back): most calls repeat none of their recent ones, and the
   * search for a period then stops here.
   */
  latestRepeats(from: number, to: number): boolean {
    const latest = this.length - 1;
    for (let back = from; back <= to && back < this.length; back++) if (this.same(latest - back, latest)) return true;
    return false;
  }

  /** How many steps are the call whose id is `hash` and `high`. */
  count(hash: number, high: number): number {
    const cols = this.cols;
    let n = 0;
    for (let at = 0; at < WIDTH * this.length; at += WIDTH) if (cols[at] === hash && cols[at + 1] === high) n++;
    return n;
  }

  /** Step `i`'s outcome key, undefined when the log does not tell. */
  key(i: number): number | undefined {
    const at = WIDTH * this.slot(i);
    const flags = this.cols[at + 4] as number;
    if ((flags & HAS_KEY) === 0) return undefined;
    const hash = wholeHash(this.cols[at + 2] as number, this.cols[at + 3] as number);
    return (flags & NEGATIVE) === 0 ? hash : -1 - hash;
  }

  /** Whether step `i` failed. */
  failed(i: number): boolean {
    return ((this.cols[WIDTH * this.slot(i) + 4] as number) & 3) === ERROR;
  }

  /** Step `i`'s output key when it succeeded with a known output, else undefined (`progressOf`). */
  succeededWith(i: number): number | undefined {
    return ((this.cols[WIDTH * this.slot(i) + 4] as number) & 3) === OK ? this.key(i) : undefined;
  }

  /** Step `i`'s tool (a window made `withTools`). */
  tool(i: number): string {
    return (this.tools as string[])[this.slot(i)] as string;
  }

  /** Step `i`'s event (made again from the columns: equal to the call's `ref`, not the same object). */
  ref(i: number): EventRef {
    const at = this.slot(i);
    return { file: this.files[at] as string, line: this.cols[WIDTH * at + 5] as number, event: this.cols[WIDTH * at + 6] as number };
  }
}
