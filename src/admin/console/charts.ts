import { html } from "hono/html";
import type { DailySeries } from "../overview";

/**
 * A bar chart of a daily series as inline SVG, drawn on the server (no script, nothing but presentation attributes,
 * so the console's CSP stays as strict). It is an image to assistive technology, described in words: the total, the
 * busiest day and today.
 */

const WIDTH = 300;
const HEIGHT = 80;
const DAY_MS = 86_400_000;

const dayLabel = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function barChart(
  title: string,
  data: DailySeries,
  since: number,
  tone: "neutral" | "alarm" = "neutral",
) {
  const max = Math.max(1, ...data.values);
  const slot = WIDTH / data.values.length;
  const busiest = data.values.indexOf(Math.max(...data.values));
  const today = data.values.at(-1) ?? 0;
  const description =
    data.total === 0
      ? `${title}: none in the last ${data.values.length} days.`
      : `${title}: ${data.total} in the last ${data.values.length} days; most on ${dayLabel(since + busiest * DAY_MS)} (${data.values[busiest]}); today ${today}.`;
  const fill = tone === "alarm" ? "#c62828" : "#1f4fc4";
  return html`<figure class="chart"><figcaption><span>${title}</span> <strong>${data.total}</strong></figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT + 14}" width="100%" role="img" aria-label="${description}" preserveAspectRatio="none">
<line x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}" stroke="#8888" stroke-width="1"></line>
${data.values.map((value, index) => {
  const height = value === 0 ? 0 : Math.max(2, (value / max) * (HEIGHT - 4));
  return html`<rect x="${(index * slot + 1).toFixed(1)}" y="${(HEIGHT - height).toFixed(1)}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${height.toFixed(1)}" fill="${fill}"><title>${dayLabel(since + index * DAY_MS)}: ${value}</title></rect>`;
})}
<text x="0" y="${HEIGHT + 12}" font-size="9" fill="currentColor">${dayLabel(since)}</text>
<text x="${WIDTH}" y="${HEIGHT + 12}" font-size="9" fill="currentColor" text-anchor="end">today</text>
</svg></figure>`;
}
