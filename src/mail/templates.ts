/**
 * Mail templates per locale (contract §8). Placeholders are `${name}`; values are HTML-escaped in the HTML part.
 * A locale without the template falls back to the default locale of the same template.
 */

export type TemplateName = "email-verify";

interface Template {
  subject: string;
  text: string;
  html: string;
}

type Catalog = Record<string, Partial<Record<TemplateName, Template>>>;

const catalog: Catalog = {
  en: {
    "email-verify": {
      subject: "Verify your email",
      text: "Hello ${displayName},\n\nUse this link to verify your email address:\n${link}\n",
      html: '<p>Hello ${displayName},</p><p><a href="${link}">Verify your email address</a></p>',
    },
  },
};

const PLACEHOLDER = /\$\{(\w+)\}/g;

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch,
  );
}

export function renderTemplate(
  name: TemplateName,
  locale: string,
  defaultLocale: string,
  values: Record<string, string>,
): Template {
  const template = catalog[locale]?.[name] ?? catalog[defaultLocale]?.[name] ?? catalog.en?.[name];
  if (!template) throw new Error(`mail template ${name} is missing`);
  const fill = (source: string, encode: (v: string) => string) =>
    source.replace(PLACEHOLDER, (whole, key: string) => (key in values ? encode(values[key]!) : whole));
  return {
    subject: fill(template.subject, (v) => v),
    text: fill(template.text, (v) => v),
    html: fill(template.html, escapeHtml),
  };
}
