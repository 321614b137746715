import { html } from "hono/html";
import type { Overview } from "../overview";
import { barChart } from "./charts";
import { type Chrome, frame } from "./pages";

/** The console's first page: how many users in what state, and 30 days of sign-ups, sign-ins and alarms. */
export function overviewPage(chrome: Chrome, data: Overview) {
  const { users } = data;
  const stat = (label: string, value: number, href?: string) =>
    html`<div class="stat"><span class="value">${href ? html`<a href="${href}">${value}</a>` : value}</span><span class="label">${label}</span></div>`;
  return frame(
    chrome,
    html`<h1>Overview</h1>
<section class="stats" aria-label="Users">
${stat("users", users.total, `${chrome.base}/users`)}
${stat("verified", users.verified, `${chrome.base}/users?status=verified`)}
${stat("anonymous", users.anonymous, `${chrome.base}/users?status=anonymous`)}
${stat("disabled", users.disabled, `${chrome.base}/users?status=disabled`)}
${stat("active sessions", data.activeSessions)}
</section>
<section class="charts" aria-label="The last 30 days">
${barChart("New users", data.newUsers, data.since)}
${barChart("Sign-ins", data.signIns, data.since)}
${barChart("Failed sign-ins", data.failedSignIns, data.since, "alarm")}
${barChart("Refresh-token replays", data.refreshReplays, data.since, "alarm")}
</section>
<p class="muted">From the users table and the audit log (UTC days). Failed sign-ins and replays link to the <a href="${chrome.base}/audit?type=signin.failure">audit log</a>.</p>`,
  );
}
