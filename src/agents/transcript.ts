import { hash53 } from '../core/canonical';
import type { GuardianEvent } from '../core/events';
import { isObject, nonEmptyString } from '../core/guards';
import { parseJson, stringifyJson } from '../core/json';

export { isObject };

/** Where a decoder's output goes: events in the guardian's v1 shape, and what it could not use. */
export interface AdapterSink {
  /** `line` is the 1-based line of the record the event came from. */
  event(event: GuardianEvent, line: number): void;
  skipped(line: number, field: string, reason: string): void;
}

/**
 * Turns one agent's records into guardian events. A decoder keeps what it needs across records
 * (calls waiting for their results, ids already seen) and is fed the records in file order.
 */
export interface Decoder {
  /** One record: a JSONL line's value, or one element of a document's record array. */
  record(value: unknown, line: number, sink: AdapterSink): void;
  /** Everything there is has been read (the end of a replay): settle what still waits. */
  finish(sink: AdapterSink): void;
}

interface AdapterBase {
  /** The `agent` its events carry (the agent's `eventAgent`). */
  readonly agent: string;
}

/** One JSON object per line, appended as the agent works: read incrementally. */
export interface JsonlAdapter extends AdapterBase {
  readonly layout: 'jsonl';
  /** Whether a file whose first record is this one is in the agent's format. */
  sniff(first: Record<string, unknown>): boolean;
  /** `fallbackSession` names the session until the records do (a file's name). */
  decoder(fallbackSession: string): Decoder;
}

/** One JSON document, rewritten whole: read whole. */
export interface DocumentAdapter extends AdapterBase {
  readonly layout: 'document';
  sniff(doc: unknown): boolean;
  /**
   * The document's records in order, and where they are: the key of the top-level array that
   * holds them (`null` when the document is that array), for line numbers.
   */
  records(doc: unknown): { readonly key: string | null; readonly items: readonly unknown[] };
  /** A decoder for this document's records; `fallbackSession` names the session if the document does not. */
  decoder(fallbackSession: string, doc: unknown): Decoder;
}

export type Adapter = JsonlAdapter | DocumentAdapter;

export type Json = Record<string, unknown>;

export const str = nonEmptyString;

/** An ISO timestamp with offset from an ISO string or epoch milliseconds; undefined when there is none. */
export function isoTime(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const ms = typeof v === 'number' ? v : Date.parse(v);
  if (!Number.isFinite(ms)) return undefined;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** Call arguments as an object: objects as they are, anything else under `input`. */
export function argsObject(v: unknown): Json {
  if (isObject(v)) return v;
  return v === undefined ? {} : { input: v };
}

/** Arguments encoded as a JSON string (Codex, OpenAI function calls); kept as text when not JSON or nested too deep. */
export function parseArgsText(text: unknown): Json {
  if (typeof text !== 'string') return argsObject(text);
  const parsed = parseJson(text);
  return parsed.ok ? argsObject(parsed.value) : { arguments: text };
}

/** A record's value as JSON text, depth-limited (the value comes from an agent's file). */
export function jsonText(value: unknown): string {
  return stringifyJson(value) ?? '';
}

/** The text of Anthropic-style content: a string, or blocks whose text parts are joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : jsonText(content);
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push(block);
    else if (isObject(block)) {
      if (typeof block.text === 'string') parts.push(block.text);
      else if (typeof block.content === 'string') parts.push(block.content);
      else if (block.type === 'image') parts.push('[image]');
      else parts.push(jsonText(block));
    }
  }
  return parts.join('\n');
}

/**
 * Remembers the last `max` keys seen: enough to de-duplicate records that repeat close together.
 * It keeps each key's 53-bit hash, not the key: a reader keeps one set per transcript, and a
 * workspace with hundreds of transcripts kept tens of MB of keys (a false "seen" would take two
 * different keys with the same hash among the last `max`, about one chance in 10^12).
 */
export class RecentSet {
  private readonly keys = new Set<number>();
  constructor(private readonly max = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(hash53(key));
  }

  /** True the first time a key is seen. */
  add(key: string): boolean {
    const h = hash53(key);
    if (this.keys.has(h)) return false;
    this.keys.add(h);
    if (this.keys.size > this.max) {
      const oldest = this.keys.values().next().value as number;
      this.keys.delete(oldest);
    }
    return true;
  }
}

/** A record whose `type` the adapter does not know: skipped and counted, never fatal. */
export function unknownType(sink: AdapterSink, line: number, field: string, type: unknown): void {
  sink.skipped(line, field, type === undefined ? `missing ${field}` : `unknown record ${field} ${jsonText(type)}`);
}
