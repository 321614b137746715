import { html } from "hono/html";
import { brandPalettes, DARK_SURFACE, type Palette } from "../../lib/brand";
import { contrastRatio } from "../../lib/brand-colours";
import type { AdminBrand } from "../brand";
import { action, type Chrome, frame, when } from "./pages";

/** The console's "Brand" page: what the pages show and where each field comes from, a preview, the form, a reset. */

/** The house style's own colours (src/browser/render.ts), previewed when no brand colour is set. */
const HOUSE = {
  light: { brand: "#1f4fc4", onBrand: "#ffffff", accent: "#1f4fc4" },
  dark: { brand: "#1f4fc4", onBrand: "#ffffff", accent: "#8fb0ff" },
};

const ratio = (a: string, b: string) => `${contrastRatio(a, b).toFixed(1)}:1`;

/**
 * One colour scheme as a picture: a primary button and a link on the page's background. SVG paints with attributes,
 * which the console's CSP (styles by nonce only) allows, so the colours need no style of their own.
 */
function swatch(label: string, colours: Palette, page: string) {
  const text = `${label}: a button ${colours.brand} labelled ${colours.onBrand} (${ratio(colours.brand, colours.onBrand)}), links ${colours.accent} (${ratio(colours.accent, page)})`;
  return html`<figure class="chart"><figcaption><span>${label}</span></figcaption>
<svg viewBox="0 0 260 96" width="260" height="96" role="img" aria-label="${text}">
<rect width="260" height="96" rx="8" fill="${page}" stroke="#8888"/>
<rect x="16" y="14" width="112" height="36" rx="6" fill="${colours.brand}"/>
<text x="72" y="37" text-anchor="middle" font-family="system-ui, sans-serif" font-size="15" fill="${colours.onBrand}">Sign in</text>
<text x="16" y="76" font-family="system-ui, sans-serif" font-size="14" text-decoration="underline" fill="${colours.accent}">Forgot your password?</text>
</svg>
<p class="muted">Label ${ratio(colours.brand, colours.onBrand)} · links ${ratio(colours.accent, page)}</p></figure>`;
}

function preview(view: AdminBrand) {
  const shown = view.brand;
  const palettes =
    brandPalettes({ color: shown.color ?? undefined, colorDark: shown.colorDark ?? undefined }) ?? HOUSE;
  return html`<section aria-label="Preview">
${
  shown.logoUrl || shown.name
    ? html`<p class="brand-preview">${shown.logoUrl ? html`<img src="${shown.logoUrl}" alt="${shown.name ?? "Logo"}" height="40" referrerpolicy="no-referrer"> ` : ""}<strong>${shown.name ?? ""}</strong></p>`
    : html`<p class="muted">No name or logo: the pages show none.</p>`
}
<div class="charts">${swatch("Light pages", palettes.light, "#ffffff")}${swatch("Dark pages", palettes.dark, DARK_SURFACE)}</div>
</section>`;
}

const FIELDS = [
  ["name", "Name", "1–80 characters; in each page's header and title"],
  ["logoUrl", "Logo URL", "https; beside the name"],
  ["color", "Colour, light pages", "#rrggbb: buttons and links"],
  ["colorDark", "Colour, dark pages", "#rrggbb; empty: the light colour"],
] as const;

type Field = (typeof FIELDS)[number][0];

function origin(view: AdminBrand, field: Field) {
  if (view.console?.[field]) return "set here";
  if (view.configuration[field]) return "configuration";
  return "–";
}

export function brandPage(
  chrome: Chrome,
  view: AdminBrand,
  /** A refused form: what was typed, shown again with the reason. */
  refused?: { error: string; values: Record<Field, string> },
) {
  const value = (field: Field) => (refused ? refused.values[field] : (view.console?.[field] ?? ""));
  return frame(
    chrome,
    html`<h1>Brand</h1>
<p class="muted">The name, logo and colour of the built-in pages (sign-in, consent, device, sign-out, the account
center). A field set here wins over the configuration's (<code>AUTH_BRAND_NAME</code>, <code>AUTH_BRAND_LOGO_URL</code>,
<code>AUTH_BRAND_COLOR</code>, <code>AUTH_BRAND_COLOR_DARK</code>); an empty one uses it. Label and link colours are
derived for contrast. Pages show a change within 30 seconds.</p>
${preview(view)}
<table class="cards"><thead><tr><th>Field</th><th>Shown</th><th>From</th><th>Configuration</th></tr></thead><tbody>${FIELDS.map(
      ([field, label]) =>
        html`<tr><td data-label="Field">${label}</td><td data-label="Shown">${view.brand[field] ?? "–"}</td><td data-label="From">${origin(view, field)}</td><td data-label="Configuration">${view.configuration[field] ?? "–"}</td></tr>`,
    )}</tbody></table>
${view.updatedAt ? html`<p class="muted">Last saved here ${when(view.updatedAt)}.</p>` : ""}
<h2 id="edit">Set the brand</h2>
${refused ? html`<p class="error" role="alert">${refused.error}</p>` : ""}
<form method="post" action="${chrome.base}/brand" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  ${FIELDS.map(
    ([field, label, hint]) =>
      html`<label>${label} (${hint}) <input name="${field}" value="${value(field)}" placeholder="${view.configuration[field] ?? ""}" spellcheck="false" maxlength="${field === "logoUrl" ? 2048 : field === "name" ? 80 : 7}"${field === "logoUrl" ? html` type="url"` : ""}></label>`,
  )}
  <button class="primary" type="submit">Save</button>
</form>
${
  view.console
    ? html`<div class="actions">${action(chrome, "/brand/reset", "Reset to the configuration", "danger")}</div>`
    : ""
}`,
  );
}
