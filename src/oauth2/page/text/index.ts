import type { Context } from "hono";
import { de } from "./de";
import { en, type PageText } from "./en";
import { fr } from "./fr";

export type { PageText } from "./en";

/**
 * The words of the built-in sign-in, consent and device pages, one catalogue per language (like the mail
 * templates). The language is the first of the request's `ui_locales` (OIDC Core §3.1.2.1) that we have, else the
 * browser's `Accept-Language` in its order of preference, else English. A new language is a file here and a line in
 * `CATALOG`.
 */
export const CATALOG: Record<string, PageText> = { en, fr, de };

/** Language tags in preference order from an `Accept-Language` header (q-values honoured, at most 20 read). */
function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 500)
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1",
      );
      return { tag: tag.trim().toLowerCase(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.tag && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.tag);
}

/** The page's words for this request: `uiLocales` (the OAuth2 request's) first, then the browser's languages. */
export function pageText(c: Context, uiLocales: string[] = []): PageText {
  for (const tag of [
    ...uiLocales.map((l) => l.toLowerCase()),
    ...acceptedLanguages(c.req.header("accept-language")),
  ]) {
    const found = CATALOG[tag.split("-")[0] ?? ""];
    if (found) return found;
  }
  return en;
}
