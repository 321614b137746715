import { desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { z } from "zod";
import { asPages } from "../../browser/page-faults";
import { devMailbox } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { setPageHeaders } from "../../http/page-headers";
import { queryParams } from "../../http/validation";

/**
 * The development mailbox as a browsable inbox (`AUTH_DEV_MAILBOX`, set by `npm start`): the newest mails, each
 * opened on its own page with its links clickable. Mail HTML is never rendered (it is attacker-influenced text, and
 * the text part carries the same links); the text part is shown escaped with its URLs as links.
 */
const LIMIT = 100;

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }
  table { width: 100%; border-collapse: collapse; }
  td, th { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #8884; }
  pre { white-space: pre-wrap; padding: 1rem; border: 1px solid #8884; border-radius: 8px; }
  .muted { color: #595959; } @media (prefers-color-scheme: dark) { .muted { color: #b3b3b3; } }
`;

function layout(nonce: string, title: string, body: HtmlEscapedString | Promise<HtmlEscapedString>) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style nonce="${nonce}">${STYLE}</style></head>
<body>${body}</body></html>`;
}

/** The text with every http(s) URL as a link; everything escaped. */
function linkified(text: string) {
  const parts = text.split(/(https?:\/\/[^\s<>"]+)/g);
  return parts.map((part, i) => (i % 2 === 1 ? html`<a href="${part}">${part}</a>` : html`${part}`));
}

const inboxPages = new Hono<AppEnv>()
  .get("/dev/inbox", queryParams(z.object({ to: z.string().max(254).optional() })), async (c) => {
    const { to } = c.req.valid("query");
    const rows = await c.var.deps.db
      .select({
        id: devMailbox.id,
        to: devMailbox.to,
        subject: devMailbox.subject,
        createdAt: devMailbox.createdAt,
      })
      .from(devMailbox)
      .where(to ? eq(devMailbox.to, to.toLowerCase()) : undefined)
      .orderBy(desc(devMailbox.id))
      .limit(LIMIT)
      .all();
    const nonce = setPageHeaders(c);
    return c.html(
      layout(
        nonce,
        "Development inbox",
        html`<h1>Development inbox</h1>
<p class="muted">Mails the service would have sent (development transport; never on in production).${
          to ? html` To <strong>${to}</strong> only — <a href="?">show all</a>.` : ""
        }</p>
${
  rows.length === 0
    ? html`<p>No mail yet.</p>`
    : html`<table><thead><tr><th>When</th><th>To</th><th>Subject</th></tr></thead><tbody>
${rows.map(
  (
    row,
  ) => html`<tr><td class="muted">${new Date(row.createdAt).toISOString().replace("T", " ").slice(0, 19)}</td>
<td><a href="?to=${encodeURIComponent(row.to)}">${row.to}</a></td><td><a href="inbox/${row.id}">${row.subject}</a></td></tr>`,
)}
</tbody></table>`
}`,
      ),
    );
  })
  .get("/dev/inbox/:id{[0-9]{1,12}}", async (c) => {
    const row = await c.var.deps.db
      .select()
      .from(devMailbox)
      .where(eq(devMailbox.id, Number(c.req.param("id"))))
      .get();
    const nonce = setPageHeaders(c);
    if (!row)
      return c.html(layout(nonce, "Not found", html`<p>No such mail. <a href="../inbox">Inbox</a></p>`), 404);
    return c.html(
      layout(
        nonce,
        row.subject,
        html`<p><a href="../inbox">← Inbox</a></p><h1>${row.subject}</h1>
<p class="muted">To ${row.to}, ${new Date(row.createdAt).toISOString()}</p>
<pre>${linkified(row.text)}</pre>`,
      ),
    );
  });

/**
 * Pages a developer opens in a browser, left out of the API's document (src/openapi/auth-document.ts): a fault on them
 * (D1 down) is the fault page (src/browser/page-faults.ts), not the API's JSON. `GET /dev/mailbox` beside them, read by
 * scripts and tests, keeps its JSON.
 */
export const devInboxRoutes = asPages(inboxPages);
