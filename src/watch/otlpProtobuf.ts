import * as protobuf from 'protobufjs/light';
import { bytesKept, type DecodedLogs, keyKept, MAX_DEPTH, MAX_ENTRIES, type Plain, stringKept, type TelemetryRecord, telemetryRecord, type TextBound } from '../agents/otlpLogs';

/*
 * The binary protobuf encoding of OTLP logs (`Content-Type: application/x-protobuf`): requests read
 * from the wire by the field numbers below (`decodeLogsProtobufRecords`), answers (and, for tests
 * and the bench, requests) written with protobufjs from a descriptor of the messages. No
 * OpenTelemetry package for Node ships the protocol's definitions or a request decoder (their
 * exporters only encode requests and decode responses), so the descriptor below restates the
 * fields of opentelemetry-proto (open-telemetry/opentelemetry-proto, Apache-2.0):
 * `collector/logs/v1/logs_service.proto` (ExportLogsServiceRequest, ExportLogsServiceResponse,
 * ExportLogsPartialSuccess), `logs/v1/logs.proto` (ResourceLogs, ScopeLogs — field 2, formerly
 * `instrumentation_library_logs` — and LogRecord, whose `observed_time_unix_nano` is 11 and
 * `event_name` 12), `common/v1/common.proto` (AnyValue, ArrayValue, KeyValueList, KeyValue,
 * InstrumentationScope), `resource/v1/resource.proto` (Resource), and google.rpc.Status for errors.
 * A request is read into the records the JSON reader (../agents/otlpLogs.ts) makes of the same
 * request in JSON, with its value rules (`stringKept`, `keyKept`, …): one meaning for both encodings.
 */

const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'ResourceLogs', id: 1 } } },
        ResourceLogs: { fields: { resource: { type: 'Resource', id: 1 }, scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 }, schemaUrl: { type: 'string', id: 3 } } },
        ScopeLogs: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 }, schemaUrl: { type: 'string', id: 3 } } },
        LogRecord: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            severityNumber: { type: 'int32', id: 2 },
            severityText: { type: 'string', id: 3 },
            body: { type: 'AnyValue', id: 5 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 6 },
            droppedAttributesCount: { type: 'uint32', id: 7 },
            flags: { type: 'fixed32', id: 8 },
            traceId: { type: 'bytes', id: 9 },
            spanId: { type: 'bytes', id: 10 },
            observedTimeUnixNano: { type: 'fixed64', id: 11 },
            eventName: { type: 'string', id: 12 },
          },
        },
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        InstrumentationScope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 3 } } },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        ExportLogsServiceResponse: { fields: { partialSuccess: { type: 'ExportLogsPartialSuccess', id: 1 } } },
        ExportLogsPartialSuccess: { fields: { rejectedLogRecords: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } } },
        Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } },
      },
    },
  },
});

const Request = root.lookupType('otlp.ExportLogsServiceRequest');
const Response = root.lookupType('otlp.ExportLogsServiceResponse');
const Status = root.lookupType('otlp.Status');

/** More entries (messages of any kind) or records than a request may have. */
export class TooManyEntries extends Error {}

/** What one request may hold, and how it is read: `pause` is awaited between entries (it yields when a slice is spent). */
export interface DecodeBounds {
  readonly maxEntries: number;
  readonly maxRecords: number;
  readonly pause: () => Promise<void> | undefined;
}

/*
 * The wire format read directly (protobuf's encoding: https://protobuf.dev/programming-guides/encoding/),
 * with no message objects made: a field at a time, its number, wire type and where its value lies
 * left in the variables below by `nextField` (read at once, before anything else reads a field).
 * The requests' records are built from it as the JSON encoding's reader builds them
 * (../agents/otlpLogs.ts): the same values, bounds and precedence, so that one request reads the
 * same in either encoding (a test holds them together).
 */
let F = 0;
let W = 0;
let A = 0;
let B = 0;

/** The value of the varint `varint` read last (exact to 2^53: a tag, a length, or a field's value up to seven bytes). */
let V = 0;

/** Reads the varint at `p` of `buf[..end)` into V; returns where it ends. Throws on one truncated or longer than ten bytes. */
function varint(buf: Uint8Array, p: number, end: number): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (p >= end) throw new Error('truncated varint');
    const b = buf[p++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) {
      V = v;
      return p;
    }
    mul *= 128;
  }
  throw new Error('varint too long');
}

/** Reads the field at `p` of `buf[..end)`: its number into F, wire type into W, its value's bytes into [A, B). Returns where the next one starts. Throws on bytes that are not protobuf. */
function nextField(buf: Uint8Array, p: number, end: number): number {
  p = varint(buf, p, end);
  W = V % 8;
  F = (V - W) / 8;
  if (W === 2) {
    p = varint(buf, p, end);
    if (p + V > end) throw new Error(`a field of ${V} bytes past the end`);
    A = p;
    B = p + V;
    return B;
  }
  A = p;
  if (W === 0) p = varint(buf, p, end);
  else if (W === 1) p += 8;
  else if (W === 5) p += 4;
  else throw new Error(`wire type ${W} not read`);
  if (p > end) throw new Error('truncated field');
  B = p;
  return p;
}

/** The field just read must have this wire type (a known field of another type is not an OTLP message). */
function expectWire(wire: number, what: string): void {
  if (W !== wire) throw new Error(`${what}: wire type ${W}, not ${wire}`);
}

/**
 * The int64 value of the varint field just read (in [A, B), its value in V): V itself up to seven
 * bytes (49 bits, exact), else read again as 64 bits, two's complement past 2^63, and rounded to a
 * double as a decimal string's value would be.
 */
function int64Value(buf: Uint8Array): number {
  if (B - A <= 7) return V;
  let big = 0n;
  for (let i = B - 1; i >= A; i--) big = (big << 7n) | BigInt(buf[i]! & 0x7f);
  return Number(BigInt.asIntN(64, big));
}

/** A fixed64 count of nanoseconds in `buf[a, a + 8)` as whole milliseconds (as the JSON reader takes the leading digits); undefined for 0. */
function nanosAt(buf: Uint8Array, a: number): number | undefined {
  const lo = (buf[a]! | (buf[a + 1]! << 8) | (buf[a + 2]! << 16)) + buf[a + 3]! * 0x1000000;
  const hi = (buf[a + 4]! | (buf[a + 5]! << 8) | (buf[a + 6]! << 16)) + buf[a + 7]! * 0x1000000;
  if (lo === 0 && hi === 0) return undefined;
  // 2^32 = 4294 × 10^6 + 967296: every term exact in a double.
  return hi * 4294 + Math.floor((hi * 967296 + lo) / 1e6);
}

/**
 * A string field's text. Bytes that are not UTF-8 (protobuf's strings must be) are read as the JSON
 * reader reads them, each bad sequence a replacement character: the record is kept, not the request
 * refused for one value.
 */
function textAt(buf: Buffer, a: number, b: number): string {
  return buf.toString('utf8', a, b);
}

/**
 * A place for the bytes `buf[a, b)` (not empty), from their length and five of them (the first two,
 * the middle one, the last two): short keys and values that differ mostly differ there, and a place
 * found is confirmed byte by byte (`sameAscii`), the one loop over the bytes a value read before
 * costs. A small integer, at least 0.
 */
function placeOf(buf: Uint8Array, a: number, b: number): number {
  const n = b - a;
  let h = Math.imul(n, 0x9e3779b1) ^ buf[a]!;
  h = Math.imul(h, 31) ^ buf[a + (n >> 1)]!;
  h = Math.imul(h, 31) ^ buf[b - 1]!;
  if (n > 2) {
    h = Math.imul(h, 31) ^ buf[a + 1]!;
    h = Math.imul(h, 31) ^ buf[b - 2]!;
  }
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

/** Whether every byte of `buf[a, b)` is ASCII (a string read from them is then their bytes, one to a character). */
function isAsciiAt(buf: Uint8Array, a: number, b: number): boolean {
  for (let i = a; i < b; i++) if (buf[i]! >= 0x80) return false;
  return true;
}

/** Whether `text`, read before from ASCII bytes, is the bytes `buf[a, b)`. */
function sameAscii(text: string, buf: Uint8Array, a: number, b: number): boolean {
  if (text.length !== b - a) return false;
  for (let i = a; i < b; i++) if (text.charCodeAt(i - a) !== buf[i]) return false;
  return true;
}

/**
 * Short string values read before, each as it was kept (`stringKept`), in a table of places (by
 * `placeOf`: their length and five of their bytes), a new value taking its place's: a request's
 * records repeat a few short values (an event's name, a tool's, `true`, a service's), read as the
 * same string (no copy, no decoding, no look for a secret again; a window that keeps each call's
 * tool then holds one string, not one per call). Kept for one `text` at a time (the receiver has
 * one).
 */
const VALUE_PLACES = 1024;
const VALUE_CACHED_LENGTH = 20;
const valuesRead: string[] = [];
const valuesKept: string[] = [];
let valuesText: TextBound | undefined;

/** The string value in `buf[a, b)` as kept through `text`, when it is short and plain ASCII; else undefined. */
function shortValueKept(buf: Buffer, a: number, b: number, text: TextBound): string | undefined {
  if (b - a > VALUE_CACHED_LENGTH || a === b) return undefined;
  if (text !== valuesText) {
    valuesRead.length = 0;
    valuesKept.length = 0;
    for (let i = 0; i < VALUE_PLACES; i++) {
      valuesRead.push('');
      valuesKept.push('');
    }
    valuesText = text;
  }
  const at = placeOf(buf, a, b) & (VALUE_PLACES - 1);
  if (sameAscii(valuesRead[at]!, buf, a, b)) return valuesKept[at];
  if (!isAsciiAt(buf, a, b)) return undefined;
  const value = buf.toString('latin1', a, b);
  const kept = stringKept(value, text);
  valuesRead[at] = value;
  valuesKept[at] = kept;
  return kept;
}

/** Keys read before, by a place from their length and five of their bytes (`placeOf`): a request's records repeat a few keys, each read as the same string (no copy, and a property key the engine has already hashed). */
const KEYS = new Map<number, string>();
/** Keys this long at most are kept; at most this many (then the cache is full, and keys are read as other strings). */
const KEY_CACHED_LENGTH = 64;
const KEYS_CACHED = 4096;

/** A KeyValue's key. */
function keyAt(buf: Buffer, a: number, b: number): string {
  if (b - a > KEY_CACHED_LENGTH || a === b) return textAt(buf, a, b);
  const h = placeOf(buf, a, b);
  const known = KEYS.get(h);
  if (known !== undefined && sameAscii(known, buf, a, b)) return known;
  if (!isAsciiAt(buf, a, b)) return textAt(buf, a, b);
  const key = buf.toString('latin1', a, b);
  if (known === undefined && KEYS.size < KEYS_CACHED) KEYS.set(h, key);
  return key;
}

/** Messages nested in a value (AnyValue, KeyValue, …), counted without building them: at most `left`. */
function countValues(buf: Uint8Array, s: number, e: number, kind: 'any' | 'kv' | 'list', depth: number, left: number): number {
  let n = 1;
  if (depth > 32) return n;
  for (let p = s; p < e; ) {
    p = nextField(buf, p, e);
    if (W !== 2 || n > left) continue;
    const field = F;
    const a = A;
    const b = B;
    if (kind === 'kv' && field === 2) n += countValues(buf, a, b, 'any', depth + 1, left - n);
    else if (kind === 'any' && (field === 5 || field === 6)) n += countValues(buf, a, b, 'list', depth + 1, left - n);
    else if (kind === 'list' && field === 1) n += countValues(buf, a, b, 'any', depth + 1, left - n);
  }
  return n;
}

/** Whether field `wanted` is in the message in `buf[s, e)`; if so, where its last value lies (protobuf: the last one read wins) is left in [A, B). */
function findLast(buf: Uint8Array, s: number, e: number, wanted: number): boolean {
  let from = -1;
  let to = -1;
  for (let p = s; p < e; ) {
    p = nextField(buf, p, e);
    if (F !== wanted) continue;
    expectWire(2, `field ${wanted}`);
    from = A;
    to = B;
  }
  A = from;
  B = to;
  return from >= 0;
}

/** An AnyValue in `buf[s, e)` as the JSON reader's `anyValue` makes it (one of its values, in the same order of precedence). */
function anyValueAt(buf: Buffer, s: number, e: number, depth: number, text: TextBound): Plain | undefined {
  if (depth > MAX_DEPTH) return '…';
  /** The last string value, as kept. */
  let str: string | undefined;
  let bool: boolean | undefined;
  let int: number | undefined;
  let hasInt = false;
  let dbl: number | undefined;
  let bytes = -1;
  let bytesEnd = -1;
  let arr = -1;
  let arrEnd = -1;
  let kvl = -1;
  let kvlEnd = -1;
  for (let p = s; p < e; ) {
    p = nextField(buf, p, e);
    switch (F) {
      case 1:
        expectWire(2, 'AnyValue.string_value');
        str = shortValueKept(buf, A, B, text) ?? stringKept(textAt(buf, A, B), text);
        break;
      case 2:
        expectWire(0, 'AnyValue.bool_value');
        bool = V !== 0;
        break;
      case 3:
        expectWire(0, 'AnyValue.int_value');
        int = int64Value(buf);
        hasInt = true;
        break;
      case 4:
        expectWire(1, 'AnyValue.double_value');
        dbl = buf.readDoubleLE(A);
        break;
      case 5:
        expectWire(2, 'AnyValue.array_value');
        arr = A;
        arrEnd = B;
        break;
      case 6:
        expectWire(2, 'AnyValue.kvlist_value');
        kvl = A;
        kvlEnd = B;
        break;
      case 7:
        expectWire(2, 'AnyValue.bytes_value');
        bytes = A;
        bytesEnd = B;
        break;
    }
  }
  if (str !== undefined) return str;
  if (bool !== undefined) return bool;
  if (hasInt) return Number.isFinite(int) ? int : undefined;
  if (dbl !== undefined) return Number.isFinite(dbl) ? dbl : undefined;
  if (bytes >= 0) return bytesKept(buf.toString('base64', bytes, bytesEnd), text);
  if (arr >= 0) {
    const values: Plain[] = [];
    for (let p = arr; p < arrEnd && values.length < MAX_ENTRIES; ) {
      p = nextField(buf, p, arrEnd);
      if (F !== 1) continue;
      expectWire(2, 'ArrayValue.values');
      values.push(anyValueAt(buf, A, B, depth + 1, text) ?? null);
    }
    return values;
  }
  if (kvl >= 0) return keyValuesAt(buf, kvl, kvlEnd, 1, depth + 1, text);
  // An empty AnyValue is a valid "no value".
  return null;
}

/** The KeyValue in `buf[s, e)` into `out`, as the JSON reader's `keyValues` reads one (no key, no value, or a value that is none: left out). */
function keyValueInto(out: Record<string, Plain>, buf: Buffer, s: number, e: number, depth: number, text: TextBound): void {
  let key: string | undefined;
  let value = -1;
  let valueEnd = -1;
  for (let q = s; q < e; ) {
    q = nextField(buf, q, e);
    if (F === 1) {
      expectWire(2, 'KeyValue.key');
      key = keyAt(buf, A, B);
    } else if (F === 2) {
      expectWire(2, 'KeyValue.value');
      value = A;
      valueEnd = B;
    }
  }
  if (key === undefined || value < 0) return;
  const v = anyValueAt(buf, value, valueEnd, depth, text);
  const k = keyKept(key);
  if (v !== undefined && k !== undefined) out[k] = v;
}

/** The KeyValues in field `field` of the message in `buf[s, e)` as an object, as the JSON reader's `keyValues` makes it (the first MAX_ENTRIES of them). */
function keyValuesAt(buf: Buffer, s: number, e: number, field: number, depth: number, text: TextBound): Record<string, Plain> {
  const out: Record<string, Plain> = {};
  let seen = 0;
  for (let p = s; p < e && seen < MAX_ENTRIES; ) {
    p = nextField(buf, p, e);
    if (F !== field) continue;
    expectWire(2, 'KeyValue');
    seen++;
    keyValueInto(out, buf, A, B, depth, text);
  }
  return out;
}

/** A LogRecord in `buf[s, e)`, its fields read in one walk. */
function recordAt(buf: Buffer, s: number, e: number, resource: Record<string, Plain>, scope: string, text: TextBound): TelemetryRecord {
  let time: number | undefined;
  let observed: number | undefined;
  let body: Plain = null;
  let eventName: string | undefined;
  const attributes: Record<string, Plain> = {};
  let seen = 0;
  for (let p = s; p < e; ) {
    p = nextField(buf, p, e);
    switch (F) {
      case 1:
        expectWire(1, 'LogRecord.time_unix_nano');
        time = nanosAt(buf, A);
        break;
      case 11:
        expectWire(1, 'LogRecord.observed_time_unix_nano');
        observed = nanosAt(buf, A);
        break;
      case 5:
        expectWire(2, 'LogRecord.body');
        body = anyValueAt(buf, A, B, 0, text) ?? null;
        break;
      case 6:
        expectWire(2, 'LogRecord.attributes');
        if (seen++ < MAX_ENTRIES) keyValueInto(attributes, buf, A, B, 0, text);
        break;
      case 12:
        expectWire(2, 'LogRecord.event_name');
        eventName = textAt(buf, A, B);
        break;
    }
  }
  return telemetryRecord(resource, scope, attributes, body, eventName, time ?? observed);
}

/**
 * A protobuf export request's records, read from the wire: each resource, scope and log record
 * counted (its nested values too) before it is read, each string value through `text` as it is
 * read (the receiver bounds them), `bounds.pause` between records so that one large request does
 * not hold the others. Throws TooManyEntries past the bounds, and on bytes that are not an export
 * request in protobuf.
 */
export async function decodeLogsProtobufRecords(bytes: Uint8Array, bounds: DecodeBounds, text: TextBound): Promise<DecodedLogs> {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Each entry is a field of two bytes at least (its tag and its length): a request no longer than
  // twice the bound cannot hold more, and is not counted.
  const counting = buf.length > 2 * bounds.maxEntries;
  let entries = 0;
  let nRecords = 0;
  const count = (n: number) => {
    entries += n;
    if (entries > bounds.maxEntries) throw new TooManyEntries(`more than ${bounds.maxEntries} entries`);
  };
  /** The values nested in a message's KeyValues (field `kvField`) and, for a record, its body, counted. */
  const counted = (s: number, e: number, kvField: number, body: boolean): void => {
    let n = 0;
    for (let p = s; p < e; ) {
      p = nextField(buf, p, e);
      if (W !== 2) continue;
      const field = F;
      if (field === kvField || (body && field === 5)) n += countValues(buf, A, B, field === kvField ? 'kv' : 'any', 0, bounds.maxEntries - entries - n);
    }
    count(n);
  };
  const records: TelemetryRecord[] = [];
  // Fields walked since the last look at the time: requests of empty entries are walked a slice at a time too.
  let walked = 0;
  const due = () => ((++walked & 4095) === 0 ? bounds.pause() : undefined);
  let yielding: Promise<void> | undefined;
  for (let p = 0; p < buf.length; ) {
    if ((yielding = due()) !== undefined) await yielding;
    p = nextField(buf, p, buf.length);
    if (F !== 1) continue;
    expectWire(2, 'ExportLogsServiceRequest.resource_logs');
    const rs = A;
    const re = B;
    if (counting) count(1);
    let resource: Record<string, Plain> = {};
    if (findLast(buf, rs, re, 1)) {
      const a = A;
      const b = B;
      if (counting) counted(a, b, 1, false);
      resource = keyValuesAt(buf, a, b, 1, 0, text);
    }
    for (let q = rs; q < re; ) {
      if ((yielding = due()) !== undefined) await yielding;
      q = nextField(buf, q, re);
      // (F as read by this call: not the field number the outer loop matched.)
      if ((F as number) !== 2) continue;
      expectWire(2, 'ResourceLogs.scope_logs');
      const cs = A;
      const ce = B;
      if (counting) count(1);
      let scope = '';
      if (findLast(buf, cs, ce, 1)) {
        const a = A;
        const b = B;
        if (counting) counted(a, b, 3, false);
        if (findLast(buf, a, b, 1)) scope = textAt(buf, A, B);
      }
      for (let r = cs; r < ce; ) {
        if ((yielding = due()) !== undefined) await yielding;
        r = nextField(buf, r, ce);
        if ((F as number) !== 2) continue;
        expectWire(2, 'ScopeLogs.log_records');
        const ls = A;
        const le = B;
        if (counting) count(1);
        if (++nRecords > bounds.maxRecords) throw new TooManyEntries(`more than ${bounds.maxRecords} log records`);
        // Awaited only when it yields: an await of nothing still costs a promise and a turn of the microtasks.
        if ((yielding = bounds.pause()) !== undefined) await yielding;
        if (counting) counted(ls, le, 6, true);
        records.push(recordAt(buf, ls, le, resource, scope, text));
      }
    }
  }
  return { records, rejected: 0 };
}

/** Builds what the first requests use (protobufjs makes its encoders on first use) by reading and answering one small request. */
export function warmUp(): void {
  const kv = { key: 'k', value: { stringValue: 'v' } };
  const bytes = encodeLogsProtobuf({ resourceLogs: [{ resource: { attributes: [kv] }, scopeLogs: [{ scope: { name: 's', attributes: [kv] }, logRecords: [{ attributes: [kv, { key: 'l', value: { arrayValue: { values: [{ kvlistValue: { values: [kv] } }] } } }], body: { stringValue: 'b' } }] }] }] });
  void decodeLogsProtobufRecords(bytes, { maxEntries: 100, maxRecords: 10, pause: () => undefined }, (t) => t);
  encodeAnswer({}, false);
}

/** A JSON-shaped answer (an export response, or a google.rpc.Status) in the protobuf encoding. */
export function encodeAnswer(body: unknown, isError: boolean): Uint8Array {
  const type = isError ? Status : Response;
  return type.encode(type.fromObject(body as Record<string, unknown>)).finish();
}

/** A request in the protobuf encoding, from the JSON encoding's object (for tests and the benchmark). */
export function encodeLogsProtobuf(request: unknown): Uint8Array {
  return Request.encode(Request.fromObject(request as Record<string, unknown>)).finish();
}
