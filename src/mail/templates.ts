import { z } from "zod";
import { CATALOGUES, type Language } from "../browser/text";
import { ConfigError } from "../errors";
import {
  type Catalog,
  type LocaleTemplates,
  TEMPLATE_NAMES,
  type Template,
  type TemplateName,
} from "./template-types";

/**
 * Mail templates per locale (contract §8): subject, HTML and plain text. Placeholders are `${name}`; values are
 * HTML-escaped in the HTML part. A locale without the template falls back to the default locale of the **same**
 * template. Deployers override or add templates without forking through `AUTH_EMAIL_TEMPLATES`, a JSON object
 * `{locale: {template: {subject, html, text}}}` merged over the built-in catalog (README, "Email templates").
 */

export type { Catalog, LocaleTemplates, Template, TemplateName };
export { TEMPLATE_NAMES };

/**
 * Each language's mails, from its catalogue (src/browser/text/): contract §8's, the lockout notice, the new-device
 * notice and a CIBA request's approval.
 */
const BUILT_IN: Catalog = Object.fromEntries(
  Object.entries(CATALOGUES).map(([language, catalogue]) => [
    language,
    {
      ...catalogue.mails,
      "account-locked": catalogue.lockout.mail,
      "new-device": catalogue.devices.mail,
      "impersonation-ended": catalogue.impersonation.mail,
      "ciba-request": catalogue.ciba.mail,
      "setup-connection-ready": catalogue.setupLinks.readyMail,
      "passkey-upgrade": catalogue.passkeys.mail,
    },
  ]),
);

const overrideSchema = z.record(
  z.string().min(2).max(3),
  z.partialRecord(
    z.enum(TEMPLATE_NAMES),
    z.object({ subject: z.string(), text: z.string(), html: z.string() }),
  ),
);

/** The built-in catalog with the deployer's overrides applied (parsed once, with the rest of the configuration). */
export function templateCatalog(overrides: string | undefined): Catalog {
  const catalog: Catalog = { ...BUILT_IN };
  if (!overrides) return catalog;
  let parsed: unknown;
  try {
    parsed = JSON.parse(overrides);
  } catch {
    throw new ConfigError("invalid configuration: AUTH_EMAIL_TEMPLATES is not JSON");
  }
  const result = overrideSchema.safeParse(parsed);
  if (!result.success) {
    throw new ConfigError(
      "invalid configuration: AUTH_EMAIL_TEMPLATES must map locale → template → {subject, text, html}",
    );
  }
  for (const [locale, templates] of Object.entries(result.data)) {
    catalog[locale] = { ...catalog[locale], ...templates };
  }
  return catalog;
}

const PLACEHOLDER = /\$\{(\w+)\}/g;

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch,
  );
}

export function renderTemplate(
  catalog: Catalog,
  name: TemplateName,
  locale: string,
  defaultLocale: string,
  values: Record<string, string>,
): Template {
  const template = catalog[locale]?.[name] ?? catalog[defaultLocale]?.[name] ?? catalog.en?.[name];
  if (!template) throw new Error(`mail template ${name} is missing`);
  const fill = (source: string, encode: (v: string) => string) =>
    source.replace(PLACEHOLDER, (whole, key: string) => (key in values ? encode(values[key]!) : whole));
  // A link's mail that carries a code too (the Supabase face's, as GoTrue's do) says it in a line of the mail's
  // language, unless the template places the code itself.
  const codeLine =
    values.code && !template.text.includes("${code}")
      ? (CATALOGUES[locale as Language] ?? CATALOGUES[defaultLocale as Language] ?? CATALOGUES.en).mailCode
      : undefined;
  return {
    subject: fill(template.subject, (v) => v),
    text: fill(template.text + (codeLine ? `\n${codeLine.text}\n` : ""), (v) => v),
    html: fill(template.html + (codeLine?.html ?? ""), escapeHtml),
  };
}
