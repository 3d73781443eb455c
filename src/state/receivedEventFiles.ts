import { readdirSync, statSync, unlinkSync } from 'node:fs';
import type { Workspace } from './workspace';

/** How much a receiver may write into a workspace (src/watch/otlpReceiver.ts). */
export interface EventFileBounds {
  /** One origin's events (its file and the one rotated before it). */
  readonly perOriginBytes: number;
  /** Every received event file together; past it, the oldest file goes. */
  readonly totalBytes: number;
  /** Origins with a file of their own; the events of those past it share `otlp-pooled.jsonl`. */
  readonly maxFiles: number;
}

export const DEFAULT_EVENT_FILE_BOUNDS: EventFileBounds = { perOriginBytes: 8 * 1024 * 1024, totalBytes: 128 * 1024 * 1024, maxFiles: 32 };

const DIR = '.tmp/otlp/logs';
const POOLED = 'otlp-pooled.jsonl';

/** A name as a file-name part: letters, digits, `.`, `_` and `-`. */
function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || '_';
}

/**
 * The event files a receiver writes, `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`, within bounds a
 * client cannot move (it names the file, by its `service.name` and `host.name`): each origin's
 * file rotated past half its share (so that it and its `.1` stay within it), at most `maxFiles`
 * origins (the others pooled into one file), and all of them within `totalBytes` (the file written
 * least recently goes first). What is dropped is told to `onDrop`. Files left by an earlier run
 * count from the start.
 */
export class ReceivedEventFiles {
  readonly dir = DIR;
  private readonly bounds: EventFileBounds;
  /** Each file's size, least recently written first. */
  private readonly sizes = new Map<string, number>();
  private total = 0;
  private pooledSaid = false;

  constructor(private readonly ws: Workspace, bounds: Partial<EventFileBounds>, private readonly onDrop: (what: string) => void) {
    this.bounds = { ...DEFAULT_EVENT_FILE_BOUNDS, ...bounds };
    let names: { name: string; size: number; mtime: number }[] = [];
    try {
      const abs = ws.path(DIR);
      names = readdirSync(abs)
        .filter((n) => /^otlp-.*\.jsonl(\.1)?$/.test(n))
        .map((name) => {
          const st = statSync(`${abs}/${name}`);
          return { name, size: st.isFile() ? st.size : 0, mtime: st.mtimeMs };
        });
    } catch {
      // None yet.
    }
    for (const f of names.sort((a, b) => a.mtime - b.mtime)) this.note(`${DIR}/${f.name}`, f.size);
  }

  /** Appends one batch of an origin's events (`text`, whole lines). */
  append(service: string, host: string, text: string): void {
    let rel = `${DIR}/otlp-${fileSafe(service)}-${fileSafe(host || 'local')}.jsonl`;
    if (!this.sizes.has(rel) && this.origins() >= this.bounds.maxFiles) {
      rel = `${DIR}/${POOLED}`;
      if (!this.pooledSaid) this.onDrop(`more than ${this.bounds.maxFiles} origins: the events of the others go to ${rel}`);
      this.pooledSaid = true;
    }
    const half = Math.floor(this.bounds.perOriginBytes / 2);
    const size = this.sizes.get(rel) ?? 0;
    if (size > 0 && size + text.length > half) {
      // Rotated: the file becomes `.1` (the one before dropped), a new one starts.
      this.forget(`${rel}.1`);
      this.ws.appendSync(rel, '', { rotateOver: 0 });
      this.sizes.delete(rel);
      this.total -= size;
      this.note(`${rel}.1`, size);
    }
    // A batch larger than an origin's share is not written whole: its last lines, within the share, are.
    const kept = text.length > half ? text.slice(text.indexOf('\n', text.length - half) + 1) : text;
    if (kept.length < text.length) this.onDrop(`${rel}: a batch of ${text.length} bytes cut to its last ${kept.length}`);
    this.ws.appendSync(rel, kept);
    this.note(rel, (this.sizes.get(rel) ?? 0) + Buffer.byteLength(kept));
    while (this.total > this.bounds.totalBytes && this.sizes.size > 1) {
      const oldest = this.sizes.keys().next().value as string;
      if (oldest === rel) break;
      const gone = this.sizes.get(oldest) ?? 0;
      this.drop(oldest);
      this.onDrop(`${oldest} removed (${gone} bytes): the received events keep at most ${this.bounds.totalBytes} bytes`);
    }
  }

  private origins(): number {
    let n = 0;
    for (const rel of this.sizes.keys()) if (!rel.endsWith('.1') && !rel.endsWith(POOLED)) n++;
    return n;
  }

  private note(rel: string, size: number): void {
    this.total += size - (this.sizes.get(rel) ?? 0);
    this.sizes.delete(rel);
    this.sizes.set(rel, size);
  }

  private forget(rel: string): void {
    if (this.sizes.has(rel)) this.drop(rel);
  }

  private drop(rel: string): void {
    try {
      unlinkSync(this.ws.resolveForWriteSync(rel));
    } catch {
      // Already gone.
    }
    this.total -= this.sizes.get(rel) ?? 0;
    this.sizes.delete(rel);
  }
}
