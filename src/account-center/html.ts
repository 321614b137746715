import { html } from "hono/html";

/** Small pieces of markup the sections share. Every value is escaped by `html`. */

export const errorBox = (message?: string) =>
  message ? html`<div class="error" role="alert">${message}</div>` : "";

export const hiddenFields = (hidden: Record<string, string>) =>
  Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);

/** A time for people, in the page's language, in UTC (the server knows no reader's time zone), and for machines. */
export function timeOf(ms: number, language: string) {
  const date = new Date(ms);
  let shown: string;
  try {
    shown = new Intl.DateTimeFormat(language, {
      dateStyle: "medium",
      timeStyle: "short",
      timeZone: "UTC",
    }).format(date);
  } catch {
    shown = date.toISOString().slice(0, 16).replace("T", " ");
  }
  return html`<time datetime="${date.toISOString()}">${shown} UTC</time>`;
}
