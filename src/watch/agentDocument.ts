import { createHash } from 'node:crypto';
import type { promises as fs } from 'node:fs';
import type { AdapterSink, Decoder, DocumentAdapter } from '../agents/transcript';
import type { GuardianEvent } from '../core/events';
import { exceedsDepth, parseJson, stripBom, tooDeepReason } from '../core/json';
import { arrayElementOffsets, linesOfOffsets } from '../core/jsonPositions';
import { openRegularFile } from '../state/regularFile';
import { fileSession, MAX_DOCUMENT_BYTES } from './agentLog';
import type { EventSink } from './eventLog';
import type { TailRead } from './logTail';

export interface DocumentReadOptions {
  /**
   * How long a document that is not whole JSON may stay so before it is reported: a writer that
   * rewrites it in place can be caught mid-write, and the next change mends it. Default 5 s.
   */
  readonly settleMs?: number;
  readonly now?: () => number;
  /** The session until the document names one: where it was found says (a task's folder), else its file name. */
  readonly session?: string;
}

/** A document as last read: its identity, size and time, which change with every rewrite. */
function signature(st: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** What identifies an event or a skip across readings: its content, not where it is. */
function key(value: unknown): string {
  return createHash('sha1').update(JSON.stringify(value)).digest('base64');
}

/**
 * Counts of keys: what was reported, each as many times as it was. A multiset, not a position: a
 * rewritten document may have dropped or inserted records before the ones already reported.
 */
class Reported {
  private readonly counts = new Map<string, number>();

  /** Takes the occurrences of this reading in turn: true for each one beyond those reported before. */
  fresh(k: string, seen: Map<string, number>): boolean {
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n <= (this.counts.get(k) ?? 0)) return false;
    this.counts.set(k, n);
    return true;
  }
}

/**
 * An agent's JSON document that the agent rewrites whole on every change (a task's message history),
 * read as it changes, incrementally in what it reports: each reading parses the whole document and
 * decodes every record afresh, and reports only the events (and skipped records) that no earlier
 * reading reported, by content, each as many times as it occurs. An event's number is given once,
 * in the order events were first reported, and never changes; its line is where its record starts
 * in the document as read then. Records a rewrite dropped stay reported; nothing is reported twice.
 *
 * A document that does not parse may be caught mid-write: it is read again when it changes, and
 * reported (once) only when it has stayed so for `settleMs` (its modification time that far back).
 * A document whose size and time have not changed is not read again.
 */
export class AgentDocumentReader {
  private readonly reporting: DocumentReporting;
  /** The signature of the last document decoded. */
  private last: string | undefined;
  /** The last unparseable document: its signature, why it does not parse, and whether that was reported. */
  private bad: { signature: string; line: number; reason: string; reported: boolean } | undefined;
  private readonly settleMs: number;
  private readonly now: () => number;

  constructor(readonly absPath: string, readonly name: string, readonly adapter: DocumentAdapter, opts: DocumentReadOptions = {}) {
    this.settleMs = opts.settleMs ?? 5_000;
    this.now = opts.now ?? Date.now;
    this.reporting = new DocumentReporting(name, adapter, opts.session ?? fileSession(absPath));
  }

  async read(sink: EventSink): Promise<TailRead> {
    let handle: fs.FileHandle;
    try {
      handle = await openRegularFile(this.absPath, this.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return { reset: false, bytes: 0, missing: true };
    }
    let text: string;
    let st: Awaited<ReturnType<fs.FileHandle['stat']>>;
    try {
      st = await handle.stat();
      const sig = signature(st);
      if (sig === this.last) return { reset: false, bytes: 0, missing: false };
      if (this.bad?.signature === sig) {
        this.reportIfSettled(st.mtimeMs, sink);
        return { reset: false, bytes: 0, missing: false };
      }
      if (st.size > MAX_DOCUMENT_BYTES) {
        sink.skipped({ file: this.name, line: 1, field: '(file)', reason: `${st.size} bytes: larger than the ${MAX_DOCUMENT_BYTES} bytes a document may have; not read` });
        this.last = sig;
        return { reset: false, bytes: 0, missing: false };
      }
      text = stripBom(await handle.readFile('utf8'));
      // Changed while it was read: the next reading gets it whole.
      if (signature(await handle.stat()) !== sig) return { reset: false, bytes: 0, missing: false };
    } finally {
      await handle.close();
    }
    const sig = signature(st);
    // The depth limit applies to each record below, so that one deep record costs only itself.
    const parsed = parseJson(text, Number.POSITIVE_INFINITY);
    if (!parsed.ok) {
      this.bad = { signature: sig, line: parsed.at?.line ?? 1, reason: parsed.tooDeep ? parsed.error : `not JSON: ${parsed.error}`, reported: false };
      this.reportIfSettled(st.mtimeMs, sink);
      return { reset: false, bytes: text.length, missing: false };
    }
    this.bad = undefined;
    this.last = sig;
    this.reporting.decode(parsed.value, text, sink);
    return { reset: false, bytes: text.length, missing: false };
  }

  /** Everything there is has been read: what the last reading's decoder still holds is settled. */
  finish(sink: EventSink): void {
    this.reporting.finish(sink);
  }

  /** A document that does not parse is reported once it has been so for `settleMs`. */
  private reportIfSettled(mtimeMs: number, sink: EventSink): void {
    const bad = this.bad;
    const age = this.now() - mtimeMs;
    if (bad === undefined || bad.reported || age < this.settleMs) return;
    bad.reported = true;
    sink.skipped({ file: this.name, line: bad.line, field: '(file)', reason: `${bad.reason}; unchanged for ${Math.round(age / 1000)} s` });
  }
}

/**
 * One document's readings, decoded afresh each time, of which only what no earlier reading
 * reported is reported (by content, each as many times as it occurs); events numbered in the
 * order first reported, on `counter` (shared by the documents of one source).
 */
export class DocumentReporting {
  private readonly reportedEvents = new Reported();
  private readonly reportedSkips = new Reported();
  /** The decoder of the last reading, for `finish`. */
  private decoder: Decoder | undefined;

  constructor(
    private readonly name: string,
    private readonly adapter: DocumentAdapter,
    private readonly session: string,
    private readonly counter: { events: number } = { events: 0 },
  ) {}

  /** Everything there is has been read: what the last reading's decoder still holds is settled. */
  finish(sink: EventSink): void {
    if (this.decoder) this.decoder.finish(this.collecting(sink, new Map(), new Map()));
  }

  /** One reading: `text` is the document's text, for the lines its records start on (undefined: a record's line is its number). */
  decode(doc: unknown, text: string | undefined, sink: EventSink): void {
    const { key: field, items } = this.adapter.records(doc);
    // A document on one line (as the agents write theirs, unindented) has every record on line 1: not scanned for where.
    const lines = text === undefined ? items.map((_, i) => i + 1) : text.includes('\n') ? linesOfOffsets(text, arrayElementOffsets(text, field)) : [];
    this.decoder = this.adapter.decoder(this.session, doc);
    const out = this.collecting(sink, new Map(), new Map());
    items.forEach((item, i) => {
      if (exceedsDepth(item)) out.skipped(lines[i] ?? 1, `${field ?? '(document)'}[${i}]`, tooDeepReason());
      else this.decoder?.record(item, lines[i] ?? 1, out);
    });
  }

  /** The decoder's sink for one reading: what was reported before is passed over. */
  private collecting(sink: EventSink, seenEvents: Map<string, number>, seenSkips: Map<string, number>): AdapterSink {
    return {
      event: (event: GuardianEvent, line: number) => {
        if (this.reportedEvents.fresh(key(event), seenEvents)) sink.event({ event, ref: { file: this.name, line, event: ++this.counter.events } });
      },
      skipped: (line: number, field: string, reason: string) => {
        if (this.reportedSkips.fresh(key([field, reason]), seenSkips)) sink.skipped({ file: this.name, line, field, reason });
      },
    };
  }
}
