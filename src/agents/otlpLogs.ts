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
const MAX_DEPTH = 8;
/** The most attributes read per record or resource, and elements per array or list. */
const MAX_ENTRIES = 256;
/** The longest string value kept. */
const MAX_STRING = 64 * 1024;

/** What each string value of a request becomes as it is read: itself, or bounded (the receiver's JSON path). */
export type TextBound = (text: string) => string;

const asIs: TextBound = (text) => text;

/** An AnyValue as a plain value, each string through `text`; undefined when it is none. */
export function anyValue(v: unknown, depth = 0, text: TextBound = asIs): Plain | undefined {
  if (!isObject(v)) return undefined;
  if (depth > MAX_DEPTH) return '…';
  if (typeof v.stringValue === 'string') {
    const s = text(v.stringValue);
    return s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}…` : s;
  }
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if ('intValue' in v) {
    const n = typeof v.intValue === 'number' ? v.intValue : typeof v.intValue === 'string' && /^-?\d{1,20}$/.test(v.intValue) ? Number(v.intValue) : undefined;
    return n !== undefined && Number.isFinite(n) ? n : undefined;
  }
  if ('doubleValue' in v) {
    const n = typeof v.doubleValue === 'number' ? v.doubleValue : typeof v.doubleValue === 'string' ? Number(v.doubleValue) : NaN;
    return Number.isFinite(n) ? n : undefined;
  }
  if (typeof v.bytesValue === 'string') return text(v.bytesValue).slice(0, MAX_STRING);
  if (isObject(v.arrayValue)) {
    const values = Array.isArray(v.arrayValue.values) ? v.arrayValue.values.slice(0, MAX_ENTRIES) : [];
    return values.map((x) => anyValue(x, depth + 1, text) ?? null);
  }
  if (isObject(v.kvlistValue)) return keyValues(v.kvlistValue.values, depth + 1, text) ?? {};
  // An empty AnyValue is a valid "no value".
  return Object.keys(v).length === 0 ? null : undefined;
}

/** The longest key kept. */
const MAX_KEY = 256;

/** A KeyValue list as an object (keys cut to MAX_KEY); undefined when it is not a list. */
function keyValues(list: unknown, depth = 0, text: TextBound = asIs): Record<string, Plain> | undefined {
  if (list === undefined) return {};
  if (!Array.isArray(list)) return undefined;
  const out: Record<string, Plain> = {};
  for (const kv of list.slice(0, MAX_ENTRIES)) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    const value = anyValue(kv.value, depth, text);
    const key = kv.key.length > MAX_KEY ? kv.key.slice(0, MAX_KEY) : kv.key;
    if (value !== undefined && key !== '__proto__') out[key] = value;
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

/**
 * The records of a JSON export request, each string value through `text` (the receiver bounds
 * them); throws NotAnExportRequest when the body is not one.
 */
export function decodeLogsJson(value: unknown, text: TextBound = asIs): DecodedLogs {
  if (!isObject(value)) throw new NotAnExportRequest('the body is not a JSON object');
  const resourceLogs = value.resourceLogs ?? value.resource_logs;
  if (resourceLogs === undefined) return { records: [], rejected: 0 };
  if (!Array.isArray(resourceLogs)) throw new NotAnExportRequest('resourceLogs is not a list');
  const records: TelemetryRecord[] = [];
  let rejected = 0;
  let reason: string | undefined;
  const reject = (why: string) => {
    rejected++;
    reason ??= why;
  };
  for (const rl of resourceLogs) {
    if (!isObject(rl)) {
      reject('a resourceLogs entry is not an object');
      continue;
    }
    const resource = isObject(rl.resource) ? keyValues(rl.resource.attributes, 0, text) : {};
    const scopeLogs = rl.scopeLogs ?? rl.scope_logs;
    if (!Array.isArray(scopeLogs)) continue;
    for (const sl of scopeLogs) {
      if (!isObject(sl)) {
        reject('a scopeLogs entry is not an object');
        continue;
      }
      const scope = isObject(sl.scope) && typeof sl.scope.name === 'string' ? sl.scope.name : '';
      const logRecords = sl.logRecords ?? sl.log_records;
      if (logRecords === undefined) continue;
      if (!Array.isArray(logRecords)) {
        reject('logRecords is not a list');
        continue;
      }
      for (const lr of logRecords) {
        const attributes = isObject(lr) ? keyValues(lr.attributes, 0, text) : undefined;
        if (!isObject(lr) || attributes === undefined || resource === undefined) {
          reject(!isObject(lr) ? 'a log record is not an object' : 'attributes are not a list of key-values');
          continue;
        }
        const timeMs = nanosToMs(lr.timeUnixNano) ?? nanosToMs(lr.observedTimeUnixNano);
        records.push({
          resource,
          scope,
          attributes,
          body: anyValue(lr.body, 0, text) ?? null,
          ...(typeof lr.eventName === 'string' && lr.eventName !== '' ? { eventName: lr.eventName.slice(0, MAX_KEY) } : {}),
          ...(timeMs !== undefined ? { timeMs } : {}),
        });
      }
    }
  }
  return { records, rejected, ...(reason !== undefined ? { reason } : {}) };
}
