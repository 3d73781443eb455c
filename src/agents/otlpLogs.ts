import { isObject } from '../core/guards';
import { parseJson } from '../core/json';

/*
 * An OTLP logs export request in its JSON encoding (OTLP/HTTP, `Content-Type: application/json`:
 * opentelemetry-proto `opentelemetry/proto/collector/logs/v1/logs_service.proto` and
 * `logs/v1/logs.proto`, mapped to JSON by the OTLP specification's "JSON Protobuf Encoding": field
 * names in lowerCamelCase, 64-bit integers as decimal strings, bytes as hex for trace and span
 * ids), read into flat records: each log record with its resource's and its own attributes as
 * plain values. Nothing of the request is trusted: a record that is not one is counted as
 * rejected (the export's partial success), and the request itself is refused only when it is not
 * an export request at all.
 *
 *   { resourceLogs: [{ resource: { attributes: [KeyValue] },
 *                      scopeLogs: [{ scope: { name, version }, logRecords: [LogRecord] }] }] }
 *   LogRecord: { timeUnixNano, observedTimeUnixNano, severityText, body: AnyValue,
 *                attributes: [KeyValue], eventName, traceId, spanId }
 *   KeyValue: { key, value: AnyValue }
 *   AnyValue: one of stringValue, boolValue, intValue, doubleValue, bytesValue,
 *             arrayValue: { values: [AnyValue] }, kvlistValue: { values: [KeyValue] }
 */

export type Plain = string | number | boolean | null | readonly Plain[] | { readonly [k: string]: Plain };

/** One log record, flattened. */
export interface TelemetryRecord {
  /** The resource's attributes (`service.name`, `host.name`, …). */
  readonly resource: Readonly<Record<string, Plain>>;
  readonly scope: string;
  /** The record's attributes (`event.name`, `session.id`, …). */
  readonly attributes: Readonly<Record<string, Plain>>;
  readonly body: Plain;
  /** The record's `eventName` field (OTLP 1.5+), when set. */
  readonly eventName?: string;
  /** When it happened, in ms since the epoch (its time, else when it was observed). */
  readonly timeMs?: number;
}

export interface DecodedLogs {
  readonly records: TelemetryRecord[];
  /** Log records that were not records (not objects, attributes not a list): rejected, counted. */
  readonly rejected: number;
  /** Why some were rejected (the first reason), for the partial-success message. */
  readonly reason?: string;
}

/** Depth to which an AnyValue is read; deeper ones are cut (kept as the string "…"). */
export const MAX_DEPTH = 8;
/** The most attributes read per record or resource, and elements per array or list. */
export const MAX_ENTRIES = 256;
/** The longest string value kept. */
const MAX_STRING = 64 * 1024;

/** What each string value of a request becomes as it is read: itself, or bounded (the receiver's JSON path). */
export type TextBound = (text: string) => string;

const asIs: TextBound = (text) => text;

/** An AnyValue as a plain value, each string through `text`; undefined when it is none. */
export function anyValue(v: unknown, depth = 0, text: TextBound = asIs): Plain | undefined {
  if (!isObject(v)) return undefined;
  if (depth > MAX_DEPTH) return '…';
  if (typeof v.stringValue === 'string') return stringKept(v.stringValue, text);
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if ('intValue' in v) {
    const n = typeof v.intValue === 'number' ? v.intValue : typeof v.intValue === 'string' && /^-?\d{1,20}$/.test(v.intValue) ? Number(v.intValue) : undefined;
    return n !== undefined && Number.isFinite(n) ? n : undefined;
  }
  if ('doubleValue' in v) {
    const n = typeof v.doubleValue === 'number' ? v.doubleValue : typeof v.doubleValue === 'string' ? Number(v.doubleValue) : NaN;
    return Number.isFinite(n) ? n : undefined;
  }
  if (typeof v.bytesValue === 'string') return bytesKept(v.bytesValue, text);
  if (isObject(v.arrayValue)) {
    const values = Array.isArray(v.arrayValue.values) ? v.arrayValue.values.slice(0, MAX_ENTRIES) : [];
    return values.map((x) => anyValue(x, depth + 1, text) ?? null);
  }
  if (isObject(v.kvlistValue)) return keyValues(v.kvlistValue.values, depth + 1, text) ?? {};
  // An empty AnyValue is a valid "no value".
  return Object.keys(v).length === 0 ? null : undefined;
}

/** A string value as kept: through `text`, then cut to MAX_STRING. */
export function stringKept(value: string, text: TextBound): string {
  const s = text(value);
  return s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}…` : s;
}

/** A bytes value (base64, as the JSON encoding writes it) as kept. */
export function bytesKept(base64: string, text: TextBound): string {
  return text(base64).slice(0, MAX_STRING);
}

/** The longest key kept. */
const MAX_KEY = 256;

/**
 * A key as kept: cut to MAX_KEY; undefined for `__proto__`, which no plain object may hold as a key,
 * and for the empty key, which is no key: protobuf does not write an empty string, so on the wire it
 * is a KeyValue without its key.
 */
export function keyKept(key: string): string | undefined {
  const k = key.length > MAX_KEY ? key.slice(0, MAX_KEY) : key;
  return k === '__proto__' || k === '' ? undefined : k;
}

/** A log record as both encodings read it: `eventName` and `timeMs` only when there is one. */
export function telemetryRecord(resource: Record<string, Plain>, scope: string, attributes: Record<string, Plain>, body: Plain, eventName: string | undefined, timeMs: number | undefined): TelemetryRecord {
  return {
    resource,
    scope,
    attributes,
    body,
    ...(eventName !== undefined && eventName !== '' ? { eventName: eventName.slice(0, MAX_KEY) } : {}),
    ...(timeMs !== undefined ? { timeMs } : {}),
  };
}

/** A KeyValue list as an object (keys cut to MAX_KEY); undefined when it is not a list. */
function keyValues(list: unknown, depth = 0, text: TextBound = asIs): Record<string, Plain> | undefined {
  if (list === undefined) return {};
  if (!Array.isArray(list)) return undefined;
  const out: Record<string, Plain> = {};
  for (const kv of list.slice(0, MAX_ENTRIES)) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    const value = anyValue(kv.value, depth, text);
    const key = keyKept(kv.key);
    if (value !== undefined && key !== undefined) out[key] = value;
  }
  return out;
}

/** Nanoseconds since the epoch (a decimal string or a number) in ms; undefined when not a time. */
function nanosToMs(v: unknown): number | undefined {
  if (typeof v === 'number') return v > 0 ? v / 1e6 : undefined;
  if (typeof v !== 'string' || !/^\d{1,20}$/.test(v) || /^0+$/.test(v)) return undefined;
  // Milliseconds from the leading digits: a nanosecond count does not fit a double exactly.
  return v.length > 6 ? Number(v.slice(0, -6)) : 0;
}

/** An attribute as text: a non-empty string, or a number written out; undefined otherwise. */
export function attrText(v: Plain | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** An attribute that holds an object: as a map, or as its JSON text (as agents export them); undefined otherwise. */
export function attrObject(v: Plain | undefined): Record<string, unknown> | undefined {
  if (isObject(v)) return v as Record<string, unknown>;
  if (typeof v !== 'string') return undefined;
  const parsed = parseJson(v);
  return parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
}

export class NotAnExportRequest extends Error {}

/** What a request's records are read into, and what of it was rejected (the first reason kept). */
export class LogsRead {
  readonly records: TelemetryRecord[] = [];
  rejected = 0;
  reason: string | undefined;

  reject(why: string): void {
    this.rejected++;
    this.reason ??= why;
  }

  decoded(): DecodedLogs {
    return { records: this.records, rejected: this.rejected, ...(this.reason !== undefined ? { reason: this.reason } : {}) };
  }
}

/**
 * The records of a JSON export request, each string value through `text` (the receiver bounds
 * them); throws NotAnExportRequest when the body is not one.
 */
export function decodeLogsJson(value: unknown, text: TextBound = asIs): DecodedLogs {
  const into = new LogsRead();
  const reading = readLogsJson(value, text, into, Infinity);
  while (reading.next().done !== true);
  return into.decoded();
}

/**
 * The records of a JSON export request into `into`, each string value through `text`, stopping
 * (a yield) after every `slice` entries read (resources, scopes and records), so that the reader's
 * caller can let other work in; throws NotAnExportRequest when the body is not one.
 */
export function* readLogsJson(value: unknown, text: TextBound, into: LogsRead, slice: number): Generator<void, void, void> {
  if (!isObject(value)) throw new NotAnExportRequest('the body is not a JSON object');
  const resourceLogs = value.resourceLogs ?? value.resource_logs;
  if (resourceLogs === undefined) return;
  if (!Array.isArray(resourceLogs)) throw new NotAnExportRequest('resourceLogs is not a list');
  let read = 0;
  for (const rl of resourceLogs) {
    if (++read >= slice) {
      read = 0;
      yield;
    }
    if (!isObject(rl)) {
      into.reject('a resourceLogs entry is not an object');
      continue;
    }
    const resource = isObject(rl.resource) ? keyValues(rl.resource.attributes, 0, text) : {};
    const scopeLogs = rl.scopeLogs ?? rl.scope_logs;
    if (!Array.isArray(scopeLogs)) continue;
    for (const sl of scopeLogs) {
      if (++read >= slice) {
        read = 0;
        yield;
      }
      if (!isObject(sl)) {
        into.reject('a scopeLogs entry is not an object');
        continue;
      }
      const scope = isObject(sl.scope) && typeof sl.scope.name === 'string' ? sl.scope.name : '';
      const logRecords = sl.logRecords ?? sl.log_records;
      if (logRecords === undefined) continue;
      if (!Array.isArray(logRecords)) {
        into.reject('logRecords is not a list');
        continue;
      }
      for (const lr of logRecords) {
        if (++read >= slice) {
          read = 0;
          yield;
        }
        const attributes = isObject(lr) ? keyValues(lr.attributes, 0, text) : undefined;
        if (!isObject(lr) || attributes === undefined || resource === undefined) {
          into.reject(!isObject(lr) ? 'a log record is not an object' : 'attributes are not a list of key-values');
          continue;
        }
        const timeMs = nanosToMs(lr.timeUnixNano) ?? nanosToMs(lr.observedTimeUnixNano);
        into.records.push(telemetryRecord(resource, scope, attributes, anyValue(lr.body, 0, text) ?? null, typeof lr.eventName === 'string' ? lr.eventName : undefined, timeMs));
      }
    }
  }
}
