import { count, sql } from "drizzle-orm";
import { html } from "hono/html";
import { deadLetters } from "../../db/schema";
import type { Deps } from "../../http/deps";
import type { Chrome } from "./pages";

/**
 * The audit export's alert on the console's audit page (contract operators.md §4): audit events that the collector
 * refused (a 4xx: a wrong token, a wrong URL) or that ran out of retries are dead letters; the operator is told how
 * many, and where to send them again once the collector is fixed. Nothing while there are none.
 */
export async function auditExportDeadLetters(deps: Pick<Deps, "db">): Promise<number> {
  const row = await deps.db
    .select({ n: count() })
    .from(deadLetters)
    .where(sql`json_extract(${deadLetters.body}, '$.type') = 'audit.recorded'`)
    .get();
  return row?.n ?? 0;
}

export function auditExportAlert(chrome: Chrome, stuck: number) {
  if (stuck === 0) return "";
  return html`<p class="error" role="alert">${stuck} audit event${stuck === 1 ? " was" : "s were"} not shipped to the
OpenTelemetry collector (AUTH_AUDIT_OTLP_URL): it refused them or stayed down past every retry. The log's
"audit export" lines say what it answered. Fix the collector or AUTH_AUDIT_OTLP_HEADERS, then
<a href="${chrome.base}/dead-letters">send them again →</a></p>`;
}
