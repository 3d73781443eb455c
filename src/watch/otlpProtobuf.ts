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
const Response = root.lookupType('otlp.ExportLogsServiceResponse');
const Status = root.lookupType('otlp.Status');

/** A protobuf export request as the JSON encoding's plain object; throws when the bytes are not one. */
export function decodeLogsProtobuf(bytes: Uint8Array): unknown {
  const message = Request.decode(bytes);
  return Request.toObject(message, { longs: String, bytes: String, defaults: false, arrays: true, oneofs: false });
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
