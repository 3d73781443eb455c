import * as protobuf from 'protobufjs/light';

/*
 * The binary protobuf encoding of OTLP logs (`Content-Type: application/x-protobuf`), read and
 * written with protobufjs from a descriptor of the messages a logs receiver exchanges. No
 * OpenTelemetry package for Node ships the protocol's definitions or a request decoder (their
 * exporters only encode requests and decode responses), so the descriptor below restates the
 * fields of opentelemetry-proto (open-telemetry/opentelemetry-proto, Apache-2.0):
 * `collector/logs/v1/logs_service.proto` (ExportLogsServiceRequest, ExportLogsServiceResponse,
 * ExportLogsPartialSuccess), `logs/v1/logs.proto` (ResourceLogs, ScopeLogs — field 2, formerly
 * `instrumentation_library_logs` — and LogRecord, whose `observed_time_unix_nano` is 11 and
 * `event_name` 12), `common/v1/common.proto` (AnyValue, ArrayValue, KeyValueList, KeyValue,
 * InstrumentationScope), `resource/v1/resource.proto` (Resource), and google.rpc.Status for errors.
 * Decoded with protobufjs's own conversion to plain objects (lowerCamelCase names, 64-bit integers
 * as decimal strings), which is the JSON encoding's shape: one reader (./otlpLogs.ts) serves both.
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
const Resource = root.lookupType('otlp.Resource');
const Scope = root.lookupType('otlp.InstrumentationScope');
const LogRecord = root.lookupType('otlp.LogRecord');
const Response = root.lookupType('otlp.ExportLogsServiceResponse');
const Status = root.lookupType('otlp.Status');

/** A protobuf export request as the JSON encoding's plain object; throws when the bytes are not one. */
export function decodeLogsProtobuf(bytes: Uint8Array): unknown {
  const message = Request.decode(bytes);
  return Request.toObject(message, { longs: String, bytes: String, defaults: false, arrays: true, oneofs: false });
}

/** More entries (messages of any kind) or records than a request may have. */
export class TooManyEntries extends Error {}

/** What one request may hold, and how it is read: `pause` is awaited between entries (it yields when a slice is spent). */
export interface DecodeBounds {
  readonly maxEntries: number;
  readonly maxRecords: number;
  readonly pause: () => Promise<void> | undefined;
}

const TO_OBJECT = { longs: String, bytes: String, defaults: false, arrays: true, oneofs: false } as const;

/**
 * The length-delimited fields of a message in `buf[start, end)`, one at a time: `next()` moves to
 * the next (false at the end), `field`, `from` and `to` say where it is; other wire types skipped.
 * Reads the wire format itself (no object is made), so that a request is counted before anything
 * of it is built. Throws on bytes that are not protobuf.
 */
class Fields {
  field = 0;
  from = 0;
  to = 0;
  private p: number;

  constructor(private readonly buf: Uint8Array, start: number, private readonly end: number) {
    this.p = start;
  }

  private varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.p >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.p++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    throw new Error('varint too long');
  }

  next(): boolean {
    while (this.p < this.end) {
      const tag = this.varint();
      const wire = tag & 7;
      if (wire === 2) {
        const len = this.varint();
        if (this.p + len > this.end) throw new Error(`a field of ${len} bytes past the end`);
        this.field = (tag - wire) / 8;
        this.from = this.p;
        this.to = this.p + len;
        this.p += len;
        return true;
      }
      if (wire === 0) this.varint();
      else if (wire === 1) this.p += 8;
      else if (wire === 5) this.p += 4;
      else throw new Error(`wire type ${wire} not read`);
      if (this.p > this.end) throw new Error('truncated field');
    }
    return false;
  }
}

function eachField(buf: Uint8Array, start: number, end: number, f: (field: number, s: number, e: number) => void): void {
  const it = new Fields(buf, start, end);
  while (it.next()) f(it.field, it.from, it.to);
}

/** Messages nested in a value (AnyValue, KeyValue, …), counted without building them: at most `left`. */
function countValues(buf: Uint8Array, s: number, e: number, kind: 'any' | 'kv' | 'list', depth: number, left: number): number {
  let n = 1;
  if (depth > 32) return n;
  eachField(buf, s, e, (field, a, b) => {
    if (n > left) return;
    if (kind === 'kv' && field === 2) n += countValues(buf, a, b, 'any', depth + 1, left - n);
    else if (kind === 'any' && (field === 5 || field === 6)) n += countValues(buf, a, b, 'list', depth + 1, left - n);
    else if (kind === 'list' && field === 1) n += countValues(buf, a, b, 'any', depth + 1, left - n);
  });
  return n;
}

/**
 * A protobuf export request as the JSON encoding's plain object, read entry by entry: each
 * resource, scope and log record decoded on its own (its nested values counted first), `shape`
 * applied to each record as it is made (the caller bounds its values there, so that a record's large
 * values are not all held at once), `bounds.pause` awaited between them so that one large request
 * does not hold the others. Throws TooManyEntries past the bounds, and on bytes that are not protobuf.
 */
export async function decodeLogsProtobufSliced(buf: Uint8Array, bounds: DecodeBounds, shape: (record: Record<string, unknown>) => Record<string, unknown>): Promise<unknown> {
  let entries = 0;
  let records = 0;
  const count = (n: number) => {
    entries += n;
    if (entries > bounds.maxEntries) throw new TooManyEntries(`more than ${bounds.maxEntries} entries`);
  };
  const spans = async (s: number, e: number, wanted: number): Promise<[number, number][]> => {
    const out: [number, number][] = [];
    const it = new Fields(buf, s, e);
    for (let n = 1; it.next(); n++) {
      if ((n & 4095) === 0) await bounds.pause();
      if (it.field !== wanted) continue;
      count(1);
      out.push([it.from, it.to]);
    }
    return out;
  };
  const fieldOf = (s: number, e: number, wanted: number): [number, number] | undefined => {
    let found: [number, number] | undefined;
    eachField(buf, s, e, (field, a, b) => {
      if (field === wanted) found = [a, b];
    });
    return found;
  };
  const message = (type: protobuf.Type, span: [number, number] | undefined, kvField: number): Record<string, unknown> | undefined => {
    if (span === undefined) return undefined;
    let n = 0;
    eachField(buf, span[0], span[1], (field, a, b) => {
      if (field === kvField || (type === LogRecord && field === 5)) n += countValues(buf, a, b, field === kvField ? 'kv' : 'any', 0, bounds.maxEntries - entries - n);
    });
    count(n);
    return type.toObject(type.decode(buf.subarray(span[0], span[1])), TO_OBJECT);
  };
  const resourceLogs: unknown[] = [];
  for (const rl of await spans(0, buf.length, 1)) {
    await bounds.pause();
    const resource = message(Resource, fieldOf(rl[0], rl[1], 1), 1);
    const scopeLogs: unknown[] = [];
    for (const sl of await spans(rl[0], rl[1], 2)) {
      const scope = message(Scope, fieldOf(sl[0], sl[1], 1), 3);
      const logRecords: unknown[] = [];
      for (const lr of await spans(sl[0], sl[1], 2)) {
        if (++records > bounds.maxRecords) throw new TooManyEntries(`more than ${bounds.maxRecords} log records`);
        await bounds.pause();
        logRecords.push(shape(message(LogRecord, lr, 6)!));
      }
      scopeLogs.push({ ...(scope !== undefined ? { scope } : {}), logRecords });
    }
    resourceLogs.push({ ...(resource !== undefined ? { resource } : {}), scopeLogs });
  }
  return { resourceLogs };
}

/** Builds the decoders (protobufjs makes them on first use) by decoding one small request. */
export function warmUp(): void {
  const kv = { key: 'k', value: { stringValue: 'v' } };
  const bytes = encodeLogsProtobuf({ resourceLogs: [{ resource: { attributes: [kv] }, scopeLogs: [{ scope: { name: 's', attributes: [kv] }, logRecords: [{ attributes: [kv, { key: 'l', value: { arrayValue: { values: [{ kvlistValue: { values: [kv] } }] } } }], body: { stringValue: 'b' } }] }] }] });
  void decodeLogsProtobufSliced(bytes, { maxEntries: 100, maxRecords: 10, pause: () => undefined }, (r) => r);
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
