import { LineProblem, readEventLine, type LocatedEvent, type SkippedLine } from '../core/events';
import { LogTail, withoutCR, type TailOptions, type TailRead } from './logTail';

export interface EventSink {
  event(located: LocatedEvent): void;
  skipped(skip: SkippedLine): void;
}

/** The guardian's JSONL event log (v1), read incrementally. `name` is how evidence names the file. */
export class EventLogReader {
  private readonly tail: LogTail;
  private events = 0;

  constructor(readonly absPath: string, readonly name: string, opts?: TailOptions) {
    this.tail = new LogTail(absPath, opts);
  }

  async read(sink: EventSink): Promise<TailRead> {
    const result = await this.tail.read(
      (text, line) => this.line(text, line, sink),
      (line, bytes) => sink.skipped({ file: this.name, line, field: '(line)', reason: `line of ${bytes} bytes is too long` }),
      () => {
        this.events = 0;
      },
    );
    return result;
  }

  /** The file is complete (a replay): a last line without a newline counts. */
  finish(sink: EventSink): void {
    this.tail.finish((text, line) => this.line(text, line, sink));
  }

  /** A whole log already in memory (read from a pipe), line by line like a file. */
  readAll(text: string, sink: EventSink): void {
    forEachLine(text, (line, n) => this.line(line, n, sink));
  }

  private line(text: string, line: number, sink: EventSink): void {
    if (text.trim() === '') return;
    const read = readEventLine(text);
    if (read instanceof LineProblem) sink.skipped({ file: this.name, line, field: read.field, reason: read.reason });
    else sink.event({ event: read, ref: { file: this.name, line, event: ++this.events } });
  }
}

/** Each line of a text (1-based, without its `\r\n` or `\n`), without splitting it all at once. */
export function forEachLine(text: string, onLine: (line: string, n: number) => void): void {
  let start = 0;
  for (let n = 1; start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    onLine(withoutCR(line), n);
    start = end + 1;
  }
}
