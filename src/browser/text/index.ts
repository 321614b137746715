import { de } from "./de";
import { type Catalogue, en } from "./en";
import { es } from "./es";
import { fr } from "./fr";
import { ja } from "./ja";
import { pt } from "./pt";

/**
 * Every word the service shows a person or mails them, one catalogue per language (contract §13): a folder per
 * language, its `index.ts` the whole catalogue, English the shape every other follows key for key
 * (test/i18n/catalogues.test.ts). A new language is a folder here and a line in `CATALOGUES`.
 */

export type { Catalogue };

export const LANGUAGES = ["en", "de", "fr", "es", "pt", "ja"] as const;
export type Language = (typeof LANGUAGES)[number];

export const CATALOGUES: Record<Language, Catalogue> = { en, de, fr, es, pt, ja };

const isLanguage = (tag: string): tag is Language => (LANGUAGES as readonly string[]).includes(tag);

/** Language tags in preference order from an `Accept-Language` header (q-values honoured, at most 20 read). */
export function acceptedLanguages(header: string | undefined | null): string[] {
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

/**
 * The language to speak: the first of `candidates` (most wanted first: `ui_locales`, then the user's `locale`, then
 * the browser's languages) that we ship and `offered` (`AUTH_UI_LOCALES`) allows, by its primary subtag (`pt-BR` is
 * `pt`); else the first offered language; else English.
 */
export function chooseLanguage(
  candidates: readonly (string | null | undefined)[],
  offered: readonly string[],
): Language {
  const allowed = offered.filter(isLanguage);
  for (const candidate of candidates) {
    const primary = candidate?.trim().toLowerCase().split(/[-_]/)[0] ?? "";
    if (isLanguage(primary) && allowed.includes(primary)) return primary;
  }
  return allowed[0] ?? "en";
}
