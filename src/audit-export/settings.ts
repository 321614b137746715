import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";
import { settingsSlice } from "../settings/kit";

/**
 * The audit's export to the operator's OpenTelemetry collector (contract operators.md §4): `AUTH_AUDIT_OTLP_URL`, the
 * full logs URL (`https://collector.example.com/v1/logs`), under the outbound-URL policy like every URL the service
 * posts to (a collector on this machine only while the server is local and `AUTH_OUTBOUND_ALLOW_LOCAL=true`); and
 * `AUTH_AUDIT_OTLP_HEADERS`, a secret, `key=value` pairs separated by commas, read as the OpenTelemetry SDKs read
 * `OTEL_EXPORTER_OTLP_HEADERS` (values percent-decoded). Unset: no export, and nothing written for one.
 */
const vars = z.object({
  AUTH_AUDIT_OTLP_URL: z.string().optional(),
  AUTH_AUDIT_OTLP_HEADERS: z.string().optional(),
});

/** Names a collector may not be sent by configuration: the request's own framing. */
const RESERVED = new Set(["content-type", "content-length", "host", "transfer-encoding", "connection"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `key=value,key2=value2` → headers. A malformed pair is a configuration error naming its position, never its value
 * (the variable is a secret: it holds the collector's credentials).
 */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!value?.trim()) return headers;
  for (const [index, pair] of value.split(",").entries()) {
    if (!pair.trim()) continue;
    const at = pair.indexOf("=");
    const name = at > 0 ? pair.slice(0, at).trim() : "";
    let decoded: string | null = null;
    try {
      decoded = at > 0 ? decodeURIComponent(pair.slice(at + 1).trim()) : null;
    } catch {}
    if (
      !TOKEN.test(name) ||
      decoded === null ||
      /[\r\n\0]/.test(decoded) ||
      RESERVED.has(name.toLowerCase())
    ) {
      throw new ConfigError(
        `invalid configuration: AUTH_AUDIT_OTLP_HEADERS: pair ${index + 1} is not key=value (a header name, a percent-encoded value)`,
      );
    }
    headers[name.toLowerCase()] = decoded;
  }
  return headers;
}

export interface OtlpExport {
  url: string;
  headers: Record<string, string>;
}

const resolve = (data: z.output<typeof vars>, core: CoreConfig) => {
  const url = data.AUTH_AUDIT_OTLP_URL?.trim();
  if (!url) {
    if (data.AUTH_AUDIT_OTLP_HEADERS?.trim())
      throw new ConfigError(
        "invalid configuration: AUTH_AUDIT_OTLP_HEADERS is set without AUTH_AUDIT_OTLP_URL",
      );
    return { auditExport: { otlp: null as OtlpExport | null } };
  }
  const verdict = checkOutboundUrl(url, outboundPolicy(core));
  if (!verdict.ok) {
    throw new ConfigError(`invalid configuration: AUTH_AUDIT_OTLP_URL: ${verdict.reason}`);
  }
  return {
    auditExport: { otlp: { url: verdict.url.href, headers: parseOtlpHeaders(data.AUTH_AUDIT_OTLP_HEADERS) } },
  };
};

export const auditExportSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type AuditExportSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends AuditExportSettings {}
}
