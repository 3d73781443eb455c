import { callId, type SettledCall } from '../calls';
import type { EventRef } from '../events';

/** How a step ended, as its column keeps it. */
const UNKNOWN = 0;
const OK = 1;
const ERROR = 2;

/**
 * A session's last calls, oldest first, as much of each as a window signal needs: the call's id
 * (`callId`: its signature's whole hash), how it ended (its outcome's kind and key), its tool and
 * its event. Kept in columns that are written over when full, not as the calls themselves: a
 * window holds its calls across many events (in a receiver, across every other session's), and
 * what a window holds the collector copies and promotes; a call with its arguments, outcome and
 * event is many objects, a step here is numbers and two references the events already had.
 *
 * Steps are the same call when their ids are equal: two different calls share an id once in 2^53
 * comparisons, so no call's text is kept, or written, to confirm it.
 */
export class CallSteps {
  /**
   * Per step, three numbers: the call's id, its outcome's key (NaN where the log does not tell how
   * the call ended) and its outcome's kind. One array for the three (one object per window, the
   * numbers of a step side by side), made small and grown to the capacity as the session's calls
   * come: most sessions a receiver keeps make a few calls.
   */
  private cols: Float64Array;
  private readonly tools: string[] = [];
  private readonly refs: EventRef[] = [];
  /** Where the oldest step is, once the window is full. */
  private first = 0;
  length = 0;

  constructor(readonly capacity: number) {
    this.cols = new Float64Array(3 * Math.min(FIRST_SIZE, capacity));
  }

  /** Adds the call as the latest step (past the capacity, the oldest goes); returns its id. */
  push(c: SettledCall): number {
    const o = c.outcome;
    const id = callId(c);
    let at: number;
    if (this.length < this.capacity) {
      // Growing (the oldest is at 0 until the window is full).
      at = this.length++;
      if (3 * at === this.cols.length) {
        const grown = new Float64Array(3 * Math.min(this.capacity, 2 * at));
        grown.set(this.cols);
        this.cols = grown;
      }
      this.tools.push(c.tool);
      this.refs.push(c.ref);
    } else {
      at = this.first;
      this.first = at + 1 === this.capacity ? 0 : at + 1;
      this.tools[at] = c.tool;
      this.refs[at] = c.ref;
    }
    const cols = this.cols;
    cols[3 * at] = id;
    cols[3 * at + 1] = o.key ?? Number.NaN;
    cols[3 * at + 2] = o.kind === 'error' ? ERROR : o.kind === 'ok' ? OK : UNKNOWN;
    return id;
  }

  private slot(i: number): number {
    const at = this.first + i;
    return at < this.capacity ? at : at - this.capacity;
  }

  /** Step `i`'s call id (0: the oldest). */
  id(i: number): number {
    return this.cols[3 * this.slot(i)] as number;
  }

  /** Whether steps `i` and `j` are the same call. */
  same(i: number, j: number): boolean {
    return this.cols[3 * this.slot(i)] === this.cols[3 * this.slot(j)];
  }

  /**
   * Whether the latest step is the same call as one of the steps `from` to `to` back (a cycle of
   * period p ends with the call p steps back): most calls repeat none of their recent ones, and the
   * search for a period then stops here.
   */
  latestRepeats(from: number, to: number): boolean {
    const id = this.id(this.length - 1);
    for (let back = from; back <= to && back < this.length; back++) if (this.id(this.length - 1 - back) === id) return true;
    return false;
  }

  /** How many steps are the call `id`. */
  count(id: number): number {
    let n = 0;
    for (let at = 0; at < this.length; at++) if (this.cols[3 * at] === id) n++;
    return n;
  }

  /** Step `i`'s outcome key, undefined when the log does not tell. */
  key(i: number): number | undefined {
    const k = this.cols[3 * this.slot(i) + 1] as number;
    return Number.isNaN(k) ? undefined : k;
  }

  /** Whether step `i` failed. */
  failed(i: number): boolean {
    return this.cols[3 * this.slot(i) + 2] === ERROR;
  }

  /** Step `i`'s output key when it succeeded with a known output, else undefined (`progressOf`). */
  succeededWith(i: number): number | undefined {
    const at = 3 * this.slot(i);
    const key = this.cols[at + 1] as number;
    return this.cols[at + 2] === OK && !Number.isNaN(key) ? key : undefined;
  }

  tool(i: number): string {
    return this.tools[this.slot(i)] as string;
  }

  ref(i: number): EventRef {
    return this.refs[this.slot(i)] as EventRef;
  }
}

/** The steps a window makes room for at first (grown, twice as many each time, to its capacity). */
const FIRST_SIZE = 8;
