import type { AuditRecord } from "../audit/stream";

/**
 * Audit events as OpenTelemetry log records, in OTLP/HTTP's JSON encoding: `ExportLogsServiceRequest` of
 * opentelemetry-proto (collector/logs/v1, logs/v1, common/v1) written through the proto3 JSON mapping, as the OTLP
 * specification's "JSON Protobuf Encoding" asks: field names in lowerCamelCase, 64-bit integers as decimal strings,
 * enums as their integer values, trace and span ids absent (an audit event belongs to no trace). Written here rather
 * than through @opentelemetry/otlp-transformer, whose serializer needs the SDK's log records, resources and
 * protobufjs in the Worker for four small objects (docs/decisions.md, "Issue 46: audit that leaves the building").
 */

interface AnyValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface OtlpLogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: AnyValue;
  attributes: KeyValue[];
}

export interface ExportLogsServiceRequest {
  resourceLogs: {
    resource: { attributes: KeyValue[] };
    scopeLogs: { scope: { name: string; version: string }; logRecords: OtlpLogRecord[] }[];
  }[];
}

/** SeverityNumber (logs/v1): INFO for what worked, WARN for what was refused. */
const SEVERITY = { success: { number: 9, text: "INFO" }, failure: { number: 13, text: "WARN" } } as const;

/** The instrumentation scope every record is under: what a collector's pipeline routes the audit by. */
export const AUDIT_SCOPE = "edge-auth.audit";

const text = (key: string, value: string | undefined): KeyValue[] =>
  value === undefined ? [] : [{ key, value: { stringValue: value } }];

const nanos = (iso: string) => `${BigInt(Date.parse(iso)) * 1_000_000n}`;

/**
 * One audit event as a log record. Attribute names follow OpenTelemetry's semantic conventions where one fits
 * (`user.id`, `client.address`, `user_agent.original`, `event.name`), `audit.*` for the rest; `audit.id` is unique
 * per event, so a SIEM can drop the copies an at-least-once delivery may bring.
 */
export function logRecordOf(record: AuditRecord, observedAt: number): OtlpLogRecord {
  const severity = SEVERITY[record.outcome] ?? SEVERITY.success;
  return {
    timeUnixNano: nanos(record.at),
    observedTimeUnixNano: `${BigInt(observedAt) * 1_000_000n}`,
    severityNumber: severity.number,
    severityText: severity.text,
    body: { stringValue: `${record.type} ${record.outcome} (${record.reason})` },
    attributes: [
      ...text("event.name", record.type),
      ...text("audit.id", record.id),
      ...text("audit.outcome", record.outcome),
      ...text("audit.reason", record.reason),
      ...text("audit.actor.type", record.actor.type),
      ...text("audit.actor.name", record.actor.name),
      ...text("user.id", record.userId),
      ...text("client.address", record.ip),
      ...text("user_agent.original", record.userAgent),
      // The flow's own detail, whole, as JSON: its shape differs per type (docs/operators.md lists them).
      ...text("audit.detail", JSON.stringify(record.detail)),
    ],
  };
}

/** One request's body: every record under one resource (`service.name`) and the audit's scope. */
export function exportRequestOf(
  records: AuditRecord[],
  observedAt: number,
  serviceName: string,
): ExportLogsServiceRequest {
  return {
    resourceLogs: [
      {
        resource: { attributes: text("service.name", serviceName) },
        scopeLogs: [
          {
            scope: { name: AUDIT_SCOPE, version: "1" },
            logRecords: records.map((record) => logRecordOf(record, observedAt)),
          },
        ],
      },
    ],
  };
}
