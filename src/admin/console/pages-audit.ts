import { html } from "hono/html";
import { ACTOR_KINDS } from "../../audit/actor";
import type { WireAuditEvent } from "../wire";
import { type Chrome, eventsTable, frame } from "./pages";

/** The audit log in the console: filter by user (email or id), type, client address and days; details in words. */

export interface AuditFilters {
  user: string;
  /** One of ACTOR_KINDS, or empty for every actor. */
  actor: string;
  type: string;
  ip: string;
  from: string;
  to: string;
}

/** Event types worth offering in the filter (any type may still be typed in). */
const KNOWN_TYPES = [
  "signin.success",
  "signin.failure",
  "signin.failure.repeated",
  "signin.locked",
  "signin.unlocked",
  "signup",
  "refresh.replay",
  "password.change",
  "password.reset",
  "email.change",
  "mfa.enabled",
  "mfa.disabled",
  "security-key.added",
  "pat.created",
  "provider.linked",
  "oauth2.consent",
  "oauth2.grant-revoked",
  "oauth2.client-registered",
  "admin.user.update",
  "admin.user.disable",
  "admin.user.delete",
  "admin.user.unlock",
  "admin.security-key.remove",
  "admin.console.sign-in",
  "admin.console.sign-in-failed",
];

export function auditPage(
  chrome: Chrome,
  input: {
    events: WireAuditEvent[];
    emails: Map<string, string>;
    filters: AuditFilters;
    nextCursor: string | null;
    problem?: string;
    /** The export's alert (audit-export-alert.ts), when it has one. */
    alert?: unknown;
  },
) {
  const { filters } = input;
  const query = (extra: Record<string, string>) =>
    new URLSearchParams(
      Object.entries({ ...filters, ...extra }).filter(([, value]) => value) as [string, string][],
    ).toString();
  return frame(
    chrome,
    html`<h1>Audit log</h1>
${input.alert ?? ""}
<form method="get" action="${chrome.base}/audit" class="filters" aria-label="Filter events">
  <label>User (email or id) <input name="user" value="${filters.user}" autocomplete="off"></label>
  <label>Actor <select name="actor"><option value="">anyone</option>${ACTOR_KINDS.map(
    (kind) => html`<option value="${kind}"${filters.actor === kind ? " selected" : ""}>${kind}</option>`,
  )}</select></label>
  <label>Type <input name="type" value="${filters.type}" list="event-types" placeholder="signin.failure"></label>
  <datalist id="event-types">${KNOWN_TYPES.map((type) => html`<option value="${type}"></option>`)}</datalist>
  <label>Address <input name="ip" value="${filters.ip}" size="16"></label>
  <label>From <input type="date" name="from" value="${filters.from}"></label>
  <label>to <input type="date" name="to" value="${filters.to}"></label>
  <button type="submit">Show</button>
</form>
${input.problem ? html`<p class="error" role="alert">${input.problem}</p>` : eventsTable(chrome, input.events, input.emails)}
${input.nextCursor ? html`<p><a href="?${query({ cursor: input.nextCursor })}">Older →</a></p>` : ""}`,
  );
}
