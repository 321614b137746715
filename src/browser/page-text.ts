import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import { acceptedLanguages, CATALOGUES, type Catalogue, chooseLanguage } from "./text";
import type { PageText } from "./text/en/pages";

export type { PageText };

/**
 * The catalogue for this request (contract §13): `uiLocales` (the OAuth2 request's, OIDC Core §3.1.2.1) first, then the
 * signed-in user's `locale`, then the browser's `Accept-Language` in its order of preference, among
 * `AUTH_UI_LOCALES`; else the first of those.
 */
export function catalogueFor(
  c: Context<AppEnv>,
  uiLocales: readonly string[] = [],
  userLocale?: string | null,
): Catalogue {
  const language = chooseLanguage(
    [...uiLocales, userLocale, ...acceptedLanguages(c.req.header("accept-language"))],
    c.var.config.locales.ui,
  );
  return CATALOGUES[language];
}

/** The built-in pages' words for this request (`catalogueFor`). */
export function pageText(
  c: Context<AppEnv>,
  uiLocales: readonly string[] = [],
  userLocale?: string | null,
): PageText {
  return catalogueFor(c, uiLocales, userLocale).pages;
}
