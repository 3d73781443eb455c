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
  private readonly ids: Float64Array;
  /** Each outcome's key; NaN where the log does not tell how the call ended. */
  private readonly keys: Float64Array;
  private readonly kinds: Uint8Array;
  private readonly tools: string[] = [];
  private readonly refs: EventRef[] = [];
  /** Where the oldest step is, once the columns are full. */
  private first = 0;
  length = 0;

  constructor(readonly capacity: number) {
    this.ids = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
    this.kinds = new Uint8Array(capacity);
  }

  /** Adds the call as the latest step; past the capacity, the oldest goes. */
  push(c: SettledCall): void {
    const o = c.outcome;
    const kind = o.kind === 'error' ? ERROR : o.kind === 'ok' ? OK : UNKNOWN;
    const key = o.key ?? Number.NaN;
    if (this.length < this.capacity) {
      // Growing (the oldest is at 0 until the columns are full): most sessions never fill them.
      this.ids[this.length] = callId(c);
      this.keys[this.length] = key;
      this.kinds[this.length] = kind;
      this.tools.push(c.tool);
      this.refs.push(c.ref);
      this.length++;
      return;
    }
    const at = this.first;
    this.first = (at + 1) % this.capacity;
    this.ids[at] = callId(c);
    this.keys[at] = key;
    this.kinds[at] = kind;
    this.tools[at] = c.tool;
    this.refs[at] = c.ref;
  }

  private slot(i: number): number {
    const at = this.first + i;
    return at < this.capacity ? at : at - this.capacity;
  }

  /** Step `i`'s call id (0: the oldest). */
  id(i: number): number {
    return this.ids[this.slot(i)] as number;
  }

  /** Whether steps `i` and `j` are the same call. */
  same(i: number, j: number): boolean {
    return this.ids[this.slot(i)] === this.ids[this.slot(j)];
  }

  /**
   * Whether the latest step is the same call as one of the steps `from` to `to` back (a cycle of
   * period p ends with the call p steps back): most calls repeat none of their recent ones, and the
   * search for a period then stops here.
   */
  latestRepeats(from: number, to: number): boolean {
    const id = this.ids[this.slot(this.length - 1)];
    for (let back = from; back <= to && back < this.length; back++) if (this.ids[this.slot(this.length - 1 - back)] === id) return true;
    return false;
  }

  /** How many steps are the call `id`. */
  count(id: number): number {
    let n = 0;
    for (let i = 0; i < this.length; i++) if (this.ids[i] === id) n++;
    return n;
  }

  /** Step `i`'s outcome key, undefined when the log does not tell. */
  key(i: number): number | undefined {
    const k = this.keys[this.slot(i)] as number;
    return Number.isNaN(k) ? undefined : k;
  }

  /** Whether step `i` failed. */
  failed(i: number): boolean {
    return this.kinds[this.slot(i)] === ERROR;
  }

  /** Whether step `i` succeeded with a known result (an outcome key that is an output's). */
  succeededWithKey(i: number): boolean {
    const at = this.slot(i);
    return this.kinds[at] === OK && !Number.isNaN(this.keys[at] as number);
  }

  tool(i: number): string {
    return this.tools[this.slot(i)] as string;
  }

  ref(i: number): EventRef {
    return this.refs[this.slot(i)] as EventRef;
  }
}
