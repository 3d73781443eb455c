import * as path from 'node:path';
import type { AdapterSink, Decoder, DocumentAdapter, JsonlAdapter } from '../agents/transcript';
import { arrayElementOffsets, linesOfOffsets } from '../core/jsonPositions';
import type { GuardianEvent } from '../core/events';
import { exceedsDepth, parseJson, stripBom, tooDeepReason } from '../core/json';
import { forEachLine, type EventSink } from './eventLog';
import { openRegularFile } from '../state/regularFile';
import { LogTail, type TailOptions, type TailRead } from './logTail';

/** A file's name without its folder and extension: the session until the records name one. */
export function fileSession(file: string): string {
  return path.basename(file).replace(/\.[^.]+$/, '');
}

/** Adapts the decoders' sink (events by line) to the readers' sink (events with their reference). */
class RefSink implements AdapterSink {
  private events = 0;
  constructor(private readonly name: string, public sink: EventSink) {}
  event(event: GuardianEvent, line: number): void {
    this.sink.event({ event, ref: { file: this.name, line, event: ++this.events } });
  }
  skipped(line: number, field: string, reason: string): void {
    this.sink.skipped({ file: this.name, line, field, reason });
  }
  reset(): void {
    this.events = 0;
  }
}

/**
 * An agent's own JSONL log (a transcript an agent appends to as it works), read
 * incrementally like the guardian's event log: complete lines only, each through the adapter.
 */
export class AgentLogReader {
  private readonly tail: LogTail;
  private decoder: Decoder;
  private refs: RefSink | undefined;

  constructor(readonly absPath: string, readonly name: string, readonly adapter: JsonlAdapter, opts?: TailOptions) {
    this.tail = new LogTail(absPath, { ...(adapter.maxLineBytes !== undefined ? { maxLineBytes: adapter.maxLineBytes } : {}), ...opts });
    this.decoder = adapter.decoder(fileSession(absPath));
  }

  async read(sink: EventSink): Promise<TailRead> {
    const refs = this.sinkFor(sink);
    const read = await this.tail.read(
      (text, line) => this.line(text, line, refs),
      (line, bytes) => refs.skipped(line, '(line)', `line of ${bytes} bytes is too long`),
      () => {
        // A log its agent rewrites whole goes on with the same decoder (see `rewritesWhole`).
        if (this.adapter.rewritesWhole === true) return;
        refs.reset();
        this.decoder = this.adapter.decoder(fileSession(this.absPath));
      },
    );
    return this.adapter.rewritesWhole === true && read.reset && !read.missing ? { ...read, reset: false } : read;
  }

  finish(sink: EventSink): void {
    const refs = this.sinkFor(sink);
    this.tail.finish((text, line) => this.line(text, line, refs));
    this.decoder.finish(refs);
  }

  /** A whole transcript already in memory (read from a pipe): every line, then what still waits is settled. */
  readAll(text: string, sink: EventSink): void {
    const refs = this.sinkFor(sink);
    forEachLine(text, (line, n) => this.line(line, n, refs));
    this.decoder.finish(refs);
  }

  private sinkFor(sink: EventSink): RefSink {
    // One numbering of events per file, whichever sink the caller passes.
    if (!this.refs) this.refs = new RefSink(this.name, sink);
    this.refs.sink = sink;
    return this.refs;
  }

  private line(text: string, line: number, refs: RefSink): void {
    // A plain-text transcript's lines go as they are, blank ones too (they may end a block).
    if (this.adapter.sniffText !== undefined) return this.decoder.record(line === 1 ? stripBom(text) : text, line, refs);
    if (text.trim() === '') return;
    // parseJson drops the BOM an editor may have put before line 1.
    const parsed = parseJson(text, this.adapter.lineDepth);
    if (!parsed.ok) {
      refs.skipped(line, '(line)', parsed.tooDeep ? parsed.error : `not JSON: ${parsed.error}`);
      return;
    }
    this.decoder.record(parsed.value, line, refs);
  }
}

/** Largest document read whole (the agents' documents are a few MB at most). */
export const MAX_DOCUMENT_BYTES = 256 << 20;

/**
 * An agent's JSON document (a trajectory, an event list, a message file that the agent rewrites
 * whole), read whole: each record is reported with the line it starts on.
 */
export async function readAgentDocument(absPath: string, name: string, adapter: DocumentAdapter, sink: EventSink, text?: string): Promise<void> {
  const refs = new RefSink(name, sink);
  // Without its BOM, so that the records' offsets count from the JSON.
  const body = stripBom(text ?? (await readDocumentText(absPath, name)));
  // The depth limit applies to each record below, so that one deep record costs only itself.
  const parsed = parseJson(body, Number.POSITIVE_INFINITY);
  if (!parsed.ok) {
    refs.skipped(parsed.at?.line ?? 1, '(file)', parsed.tooDeep ? parsed.error : `not JSON: ${parsed.error}`);
    return;
  }
  const doc = parsed.value;
  const { key, items } = adapter.records(doc);
  const lines = linesOfOffsets(body, arrayElementOffsets(body, key));
  const decoder = adapter.decoder(fileSession(absPath), doc);
  items.forEach((item, i) => {
    if (exceedsDepth(item)) refs.skipped(lines[i] ?? 1, `${key ?? '(document)'}[${i}]`, tooDeepReason());
    else decoder.record(item, lines[i] ?? 1, refs);
  });
  decoder.finish(refs);
}

/** A document's text; a path that is not a regular file is refused (NotRegularFileError), never read. */
export async function readDocumentText(absPath: string, name: string = absPath): Promise<string> {
  const handle = await openRegularFile(absPath, name);
  try {
    const st = await handle.stat();
    if (st.size > MAX_DOCUMENT_BYTES) throw new Error(`${name} is ${st.size} bytes: larger than the ${MAX_DOCUMENT_BYTES} bytes a document may have`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
