import { createRequire } from "node:module";
import type * as Protobuf from "protobufjs/light.js";

/**
 * The part of the OTLP trace schema (opentelemetry-proto, trace/v1 and common/v1) that the
 * inspector reads, as a protobufjs JSON descriptor: field names and numbers of the spec; fields
 * left out (dropped counts, links, flags, schema URLs) are skipped by the decoder as unknown.
 */
const descriptor = {
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } } },
    ResourceSpans: { fields: { resource: { type: "Resource", id: 1 }, scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 } } },
    Resource: { fields: { attributes: { rule: "repeated", type: "KeyValue", id: 1 } } },
    ScopeSpans: { fields: { spans: { rule: "repeated", type: "Span", id: 2 } } },
    Span: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        parentSpanId: { type: "bytes", id: 4 },
        name: { type: "string", id: 5 },
        kind: { type: "int32", id: 6 },
        startTimeUnixNano: { type: "fixed64", id: 7 },
        endTimeUnixNano: { type: "fixed64", id: 8 },
        attributes: { rule: "repeated", type: "KeyValue", id: 9 },
        events: { rule: "repeated", type: "Event", id: 11 },
        status: { type: "Status", id: 15 },
      },
    },
    Event: { fields: { timeUnixNano: { type: "fixed64", id: 1 }, name: { type: "string", id: 2 } } },
    Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
    KeyValue: { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } },
    AnyValue: {
      oneofs: { value: { oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] } },
      fields: {
        stringValue: { type: "string", id: 1 },
        boolValue: { type: "bool", id: 2 },
        intValue: { type: "int64", id: 3 },
        doubleValue: { type: "double", id: 4 },
        arrayValue: { type: "ArrayValue", id: 5 },
        kvlistValue: { type: "KeyValueList", id: 6 },
        bytesValue: { type: "bytes", id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
    KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
  },
};

// Loaded on the first protobuf request (~20 ms): most inspector runs receive OTLP/JSON or nothing.
let request: Protobuf.Type | undefined;

/** An OTLP/HTTP protobuf traces request as plain objects: ids as base64, 64-bit integers as decimal strings. */
export function decodeTraceRequest(bytes: Uint8Array): unknown {
  request ??= (createRequire(import.meta.url)("protobufjs/light.js") as typeof Protobuf).Root.fromJSON(descriptor).lookupType("ExportTraceServiceRequest");
  return request.toObject(request.decode(bytes), { bytes: String, longs: String, enums: Number, defaults: false });
}
