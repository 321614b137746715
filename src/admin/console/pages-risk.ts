import { html } from "hono/html";
import type { WireAuditEvent } from "../wire";
import { when } from "./pages";

/**
 * The user's recent risk decisions on their console page (issue 47, docs/risk.md): each sign-in the risk gate judged
 * (`signin.risk` audit events, src/risk/assess.ts), newest first, with its level, why, what was decided and by whom,
 * and where it came from, so an operator answering "why was I asked for a code?" sees the answer.
 */

const DECIDED: Record<string, string> = {
  allow: "allowed",
  challenge: "second step asked",
  refuse: "refused",
};

const BY: Record<string, string> = {
  policy: "the policy",
  hook: "the app's hook",
  "hook-fallback": "the fallback (the hook did not answer)",
};

const text = (value: unknown) => (typeof value === "string" ? value : "");

function placeOf(signals: Record<string, unknown>): string {
  const parts = [text(signals.city), text(signals.country)].filter(Boolean);
  const asn = typeof signals.asn === "number" ? `AS${signals.asn}` : "";
  return [parts.join(", "), asn].filter(Boolean).join(" · ") || "–";
}

function row(event: WireAuditEvent) {
  const { detail } = event;
  const signals = (detail.signals ?? {}) as Record<string, unknown>;
  const reasons = Array.isArray(detail.reasons) ? detail.reasons.map(String).join(", ") : "";
  const decision = text(detail.decision);
  const badge = decision === "refuse" ? "off" : decision === "allow" ? "on" : "";
  const hookReason = text(detail.hookReason);
  // Four columns, each with its detail under it in small print: the table stays readable on a phone (390 px).
  return html`<tr><td>${when(event.at)}</td><td>${text(detail.level) || "–"}<br><small class="muted">${reasons || "–"}</small></td>
<td><span class="badge ${badge}">${DECIDED[decision] ?? decision}</span><br><small class="muted">by ${BY[text(detail.by)] ?? "–"}${
    hookReason ? html`: ${hookReason}` : ""
  }${detail.capped ? html`; a known device: never refused` : ""}</small></td><td>${placeOf(signals)}<br><small class="muted">${event.ip ?? "–"}</small></td></tr>`;
}

export function riskSection(events: WireAuditEvent[]) {
  return html`<h2 id="risk">Recent risk decisions</h2>
${
  events.length === 0
    ? html`<p class="muted">No sign-in of this user was assessed yet.</p>`
    : html`<table><thead><tr><th>When (UTC)</th><th>Level, why</th><th>Decision</th><th>Where</th></tr></thead><tbody>${events.map(row)}</tbody></table>`
}`;
}
