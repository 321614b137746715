import type { Deps } from "../http/deps";
import { auditExportSettings } from "./settings";
import { otlpShipper } from "./shipper";

/**
 * The audit leaves the building (contract operators.md §4): with `AUTH_AUDIT_OTLP_URL` set, every audit event is also
 * written to the event outbox (src/audit/record.ts) and shipped from the event stream to the operator's
 * OpenTelemetry collector, with the stream's retries and dead letters. No routes: the admin API's `GET /admin/audit`
 * and the CLI's `audit export` read the log itself.
 */
export const auditExportFeature = {
  name: "audit-export",
  settings: auditExportSettings,
  eventConsumer: ({ config, db, outbound, now }: Deps) => {
    const target = config.auditExport.otlp;
    return target ? otlpShipper({ config, db, outbound, now, target }) : null;
  },
};
