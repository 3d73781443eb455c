import { hash53 } from '../core/canonical';
import { daysInMonth, type GuardianEvent } from '../core/events';
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
  /**
   * The agent rewrites the whole file at times with a fresh snapshot of the same session (an
   * operation log compacted to its current state). The decoder is then kept across the rewrite and
   * reads the new content as a continuation, reporting only what it had not reported (its records'
   * own ids tell), so the reader does not report the rewrite as a reset: what was counted stays.
   */
  readonly rewritesWhole?: boolean;
  /**
   * How deeply a line may nest (default `MAX_JSON_DEPTH`): a log whose every line holds a whole
   * state (nested results and all) takes them in full when its decoder keeps only shallow fields
   * of them and bounds the depth of whatever else it keeps.
   */
  readonly lineDepth?: number;
  /** The longest line read (default: the reader's, 16 MB); a longer one is skipped and reported. */
  readonly maxLineBytes?: number;
  /**
   * A plain-text transcript, not JSON: each line goes to the decoder as its text (a string), and
   * `sniffText` tells the format from the first non-blank line; `sniff` is then never asked.
   */
  readonly sniffText?: (firstLine: string) => boolean;
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
  // Most agents write their times as `toISOString` does: such a time is its own answer (writing it
  // again took 1.2 µs of the 1.5 a record's time cost; a test holds the shortcut to the long way).
  if (typeof v === 'string' && v.length === 24 && isCanonicalIso(v)) return v;
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const ms = typeof v === 'number' ? v : Date.parse(v);
  if (!Number.isFinite(ms)) return undefined;
  // Records come close together in time: the minute is written once, and each record's seconds and
  // milliseconds after it (as toISOString writes them: two digits, a dot, three, Z).
  if (Number.isInteger(ms) && ms >= 0 && ms < YEAR_10000) {
    const minute = Math.floor(ms / 60_000);
    if (minute !== lastMinute.minute) {
      lastMinute.minute = minute;
      lastMinute.prefix = new Date(minute * 60_000).toISOString().slice(0, 17);
    }
    const rest = ms - minute * 60_000;
    const sec = Math.floor(rest / 1000);
    const milli = rest - sec * 1000;
    return `${lastMinute.prefix}${sec < 10 ? '0' : ''}${sec}.${milli < 100 ? (milli < 10 ? '00' : '0') : ''}${milli}Z`;
  }
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The first time toISOString writes with a longer year (+010000-01-01). */
const YEAR_10000 = 253_402_300_800_000;
/** The last minute written, as toISOString writes its start up to the seconds (`2026-11-29T08:01:`). */
const lastMinute = { minute: NaN, prefix: '' };

const CANONICAL_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):\d{2}:\d{2}\.\d{3}Z$/;

/** Whether a time is written as `new Date(Date.parse(v)).toISOString()` would write it: a valid date, no field carried over. */
export function isCanonicalIso(v: string): boolean {
  // A time in the minute of the last one found canonical: its seconds and milliseconds are all that is left to look at.
  if (v.length === 24 && lastCanonicalMinute !== '' && v.startsWith(lastCanonicalMinute)) return canonicalSeconds(v);
  const m = CANONICAL_ISO.exec(v);
  if (m === null || !Number.isFinite(Date.parse(v))) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  // Date.parse takes 24:00 and a 31st of any month, and carries them into the next day or month.
  const canonical = Number(m[4]) < 24 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
  if (canonical) lastCanonicalMinute = v.slice(0, 17);
  return canonical;
}

/** The date, hour and minute of the last time found canonical (`2026-11-29T08:01:`). */
let lastCanonicalMinute = '';

/** Whether `ss.mmmZ` (from index 17) is written as toISOString writes it: seconds 00 to 59. */
function canonicalSeconds(v: string): boolean {
  const digit = (i: number) => {
    const c = v.charCodeAt(i);
    return c >= 48 && c <= 57;
  };
  const tens = v.charCodeAt(17);
  return tens >= 48 && tens <= 53 && digit(18) && v.charCodeAt(19) === 46 && digit(20) && digit(21) && digit(22) && v.charCodeAt(23) === 90;
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

const STATUS_IN_TEXT = /^\s*([1-5]\d\d)\b|\[([1-5]\d\d)\]|\b(?:status(?: code)?|HTTP(?:\/\d(?:\.\d)?)?|API Error)[:= ]+([1-5]\d\d)\b/i;

/** An HTTP status a provider's error text names: leading (`429 Too Many Requests`), `[401]`, `status 400`, `HTTP 503`, `API Error: 529`. */
export function statusInText(text: string): number | undefined {
  const m = STATUS_IN_TEXT.exec(text.slice(0, 2000));
  const digits = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
  return digits !== undefined ? Number(digits) : undefined;
}

/** What an API error an agent relays says: the fields of the `api_error` event. */
export interface ApiErrorFields {
  error?: string;
  status?: number;
  class?: string;
  model?: string;
}

/**
 * A failed model request as an agent's error text tells it: a JSON object it serialised
 * (`{message, status, code, modelId}`: Cline's `ClineError.serialize()`, cline/cline v3.89.2
 * `apps/vscode/src/services/error/ClineError.ts`), or plain text whose status is read by
 * `statusInText`. Nothing more is guessed.
 */
export function apiErrorFromText(text: string): ApiErrorFields {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const parsed = parseJson(trimmed);
    if (parsed.ok && isObject(parsed.value)) {
      const v = parsed.value;
      const inner = isObject(v.error) ? v.error : undefined;
      const message = str(v.message) ?? str(inner?.message);
      const status = [v.status, inner?.status, inner?.code].find((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599);
      const cls = str(v.code) ?? str(inner?.type) ?? str(inner?.code);
      const model = str(v.modelId);
      return {
        ...(message !== undefined ? { error: message } : { error: trimmed }),
        ...(status !== undefined ? { status } : message !== undefined && statusInText(message) !== undefined ? { status: statusInText(message) } : {}),
        ...(cls !== undefined ? { class: cls } : {}),
        ...(model !== undefined ? { model } : {}),
      };
    }
  }
  const status = statusInText(trimmed);
  return { ...(trimmed !== '' ? { error: trimmed } : {}), ...(status !== undefined ? { status } : {}) };
}
