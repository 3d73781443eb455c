import { hashHigh, reduceHash, wholeHash, type SettledCall } from '../calls';
import type { EventRef } from '../events';

/** How a step ended, as its flags keep it (the low two bits); whether its outcome has a key, and whether that key is below zero. */
const UNKNOWN = 0;
const OK = 1;
const ERROR = 2;
const HAS_KEY = 4;
const NEGATIVE = 8;
/** The flags are the low four bits of the column that holds the key's high part (23 bits above them: 27 in all, a small integer). */
const FLAG_BITS = 4;

/**
 * The columns of a step: its call's id as two small integers, its outcome's key's low 30 bits, the
 * key's high bits and the step's flags in one (23 bits and 4), then its event's line and number.
 */
const WIDTH = 6;

/** Steps the columns grow by at a time (not past the capacity): a session that made 12 calls holds 12 steps' room. */
const GROWTH = 4;
/** Zeros to grow the columns by (`concat` makes an array of exactly the length it needs). */
const ROOM: readonly (readonly number[])[] = Array.from({ length: GROWTH + 1 }, (_, steps) => Array.from({ length: WIDTH * steps }, () => 0));

/**
 * A session's last calls, oldest first, as much of each as a window signal needs: the call's id
 * (`callId`: its signature's whole hash), how it ended (its outcome's kind and key), its tool and
 * its event. Kept in columns that are written over when full, not as the calls themselves: a
 * window holds its calls across many events (in a receiver, across every other session's), and
 * what a window holds the collector copies and promotes; a call with its arguments, outcome and
 * event is many objects, a step here is numbers, and its event's file name (one string the
 * session's events share; a list of them only when they differ) and tool. Its event is kept as
 * numbers too, and made again when a finding names it: a window that held the events' own objects
 * had to tell the collector of every one it stored (a young object stored in an old one), at every
 * call.
 *
 * One window per session, kept by the engine (`SessionState.steps`) as long as the longest an
 * enabled signal asks for (`DetectorContext.window`) and added to before the signals see a call:
 * each reads as many of its latest steps as it asked for, through a window of its own that shares
 * the session's columns (`readLatest`): cycle 60, windowed-repeat 10. Two windows of the same calls
 * were twice the columns, written twice per call.
 *
 * Each 53-bit hash is kept as two small integers, its low 30 bits and the rest (as a call carries
 * its id: `signatureHash`, `signatureHigh`), and compared as such: a 53-bit number read out of a
 * column and handed to another function is boxed, one allocation per use, and the window signals
 * compare ids on every call. The columns are an array of small integers (never a pointer the
 * collector must follow, and made as cheaply as any array; a typed array's buffer is outside the
 * heap, and was as slow to make and free as the collector's copying it saved), grown a few steps
 * at a time to exactly their length: an array grown by `push` keeps half as much room again as it
 * holds, and most sessions a receiver keeps make a few calls. A window is kept, emptied, from one
 * turn of its session to the next (`clear`).
 *
 * Steps are the same call when their ids are equal: two different calls share an id once in 2^53
 * comparisons, so no call's text is kept, or written, to confirm it.
 */
export class CallSteps {
  /** Per step, `WIDTH` integers: the call's id (low 30 bits, then the rest), its outcome's key (low 30 bits; the rest and the flags), its event's line and number. */
  private cols: number[] = [];
  /** Each step's tool, when the window keeps them (`withTools`). */
  private tools: string[] | undefined;
  /** The file every step's event is in; `files` once they differ. */
  private file = '';
  private files: string[] | undefined;
  /** Where the oldest step is, once the window is full. */
  private first = 0;
  length = 0;
  /** How many steps it keeps. */
  private places: number;

  /** `withTools`: whether the window keeps each step's tool (`tool(i)`). */
  constructor(capacity: number, withTools = false) {
    this.places = capacity;
    this.tools = withTools ? [] : undefined;
  }

  /** Adds the call as the latest step (past the capacity, the oldest goes). */
  push(c: SettledCall): void {
    const o = c.outcome;
    let at: number;
    if (this.length < this.places) {
      // Growing (the oldest is at 0 until the window is full).
      at = this.length++;
      // Its place, written below: the columns grow by a few steps, unless an earlier turn grew them.
      if (WIDTH * at === this.cols.length) this.cols = this.cols.concat(ROOM[Math.min(GROWTH, this.places - at)] as number[]);
    } else {
      at = this.first;
      this.first = at + 1 === this.places ? 0 : at + 1;
    }
    if (this.tools !== undefined) this.tools[at] = c.tool;
    const file = c.ref.file;
    if (this.files !== undefined) this.files[at] = file;
    else if (this.length === 1 && this.first === 0) this.file = file;
    else if (file !== this.file) {
      this.files = Array.from({ length: this.places }, () => this.file);
      this.files[at] = file;
    }
    const cols = this.cols;
    const base = WIDTH * at;
    cols[base] = c.signatureHash;
    cols[base + 1] = c.signatureHigh;
    cols[base + 4] = c.ref.line;
    cols[base + 5] = c.ref.event;
    const kind = o.kind === 'error' ? ERROR : o.kind === 'ok' ? OK : UNKNOWN;
    const key = o.key;
    // A key is a 53-bit hash, or one below zero (an error's, -1 - hash): kept as the hash, split as a call's is, and its sign.
    const hash = key === undefined ? 0 : key < 0 ? -1 - key : key;
    cols[base + 2] = reduceHash(hash);
    cols[base + 3] = (hashHigh(hash) << FLAG_BITS) | (key === undefined ? kind : key < 0 ? kind | HAS_KEY | NEGATIVE : kind | HAS_KEY);
  }

  /**
   * Empties the window (a turn ended) and keeps its columns for the session's next turn: most
   * sessions go on, and a window made again would grow its columns again, each growth a new
   * array.
   */
  clear(): void {
    this.length = 0;
    this.first = 0;
    this.files = undefined;
  }

  /**
   * Makes this window read the latest `n` steps of `steps` (step 0 the oldest of them), sharing its
   * columns, until the next call: a signal that reads fewer of a session's calls than the window
   * keeps reads them through one of these. Never pushed to.
   */
  readLatest(steps: CallSteps, n: number): this {
    this.cols = steps.cols;
    this.tools = steps.tools;
    this.file = steps.file;
    this.files = steps.files;
    this.places = steps.places;
    this.length = Math.min(steps.length, n);
    this.first = steps.slot(steps.length - this.length);
    return this;
  }

  private slot(i: number): number {
    const at = this.first + i;
    return at < this.places ? at : at - this.places;
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
    if (this.first === 0 || this.length === this.places) {
      // Every step, at places 0 to length - 1 (the window filling) or at every place (full): in any order.
      for (let at = 0; at < WIDTH * this.length; at += WIDTH) if (cols[at] === hash && cols[at + 1] === high) n++;
      return n;
    }
    // A window read through another (`readLatest`): its places from the oldest's, round the ring.
    const end = WIDTH * this.places;
    for (let at = WIDTH * this.first, left = this.length; left > 0; left--) {
      if (cols[at] === hash && cols[at + 1] === high) n++;
      at += WIDTH;
      if (at === end) at = 0;
    }
    return n;
  }

  /** Step `i`'s outcome key, undefined when the log does not tell. */
  key(i: number): number | undefined {
    const at = WIDTH * this.slot(i);
    const packed = this.cols[at + 3] as number;
    const flags = packed & ((1 << FLAG_BITS) - 1);
    if ((flags & HAS_KEY) === 0) return undefined;
    const hash = wholeHash(this.cols[at + 2] as number, packed >>> FLAG_BITS);
    return (flags & NEGATIVE) === 0 ? hash : -1 - hash;
  }

  /** Whether step `i` failed. */
  failed(i: number): boolean {
    return ((this.cols[WIDTH * this.slot(i) + 3] as number) & 3) === ERROR;
  }

  /** Step `i`'s output key when it succeeded with a known output, else undefined (`progressOf`). */
  succeededWith(i: number): number | undefined {
    return ((this.cols[WIDTH * this.slot(i) + 3] as number) & 3) === OK ? this.key(i) : undefined;
  }

  /** Step `i`'s tool (a window made `withTools`). */
  tool(i: number): string {
    return (this.tools as string[])[this.slot(i)] as string;
  }

  /** Step `i`'s event (made again from the columns: equal to the call's `ref`, not the same object). */
  ref(i: number): EventRef {
    const at = this.slot(i);
    return { file: this.files !== undefined ? (this.files[at] as string) : this.file, line: this.cols[WIDTH * at + 4] as number, event: this.cols[WIDTH * at + 5] as number };
  }
}
