import type { Config } from "../config";

/**
 * The redirect allow-list of contract §8: `AUTH_CLIENT_URL` plus `AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS`.
 * An entry allows itself and its sub-paths; `*` in the host matches exactly one DNS label; default ports are
 * normalised by the URL parser; custom app schemes are allowed. Open redirects are the failure this prevents
 * (OWASP Unvalidated Redirects and Forwards), so anything that does not parse cleanly is refused.
 */

const REFUSED_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:"]);

function parse(value: string): URL | null {
  // Scheme-relative ("//evil.example") and backslash tricks are refused before parsing.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value) || value.includes("\\")) return null;
  try {
    const url = new URL(value);
    if (REFUSED_SCHEMES.has(url.protocol) || url.username || url.password) return null;
    return url;
  } catch {
    return null;
  }
}

function hostMatches(pattern: string, host: string): boolean {
  const want = pattern.split(".");
  const have = host.split(".");
  return want.length === have.length && want.every((label, i) => label === "*" || label === have[i]);
}

function pathMatches(pattern: string, path: string): boolean {
  if (pattern === "/" || pattern === "" || path === pattern) return true;
  const base = pattern.endsWith("/") ? pattern : `${pattern}/`;
  return path.startsWith(base);
}

export function matchesAllowedUrl(candidate: string, allowed: string): boolean {
  const url = parse(candidate);
  const rule = parse(allowed);
  if (!url || !rule) return false;
  return (
    url.protocol === rule.protocol &&
    hostMatches(rule.hostname, url.hostname) &&
    url.port === rule.port &&
    pathMatches(rule.pathname, url.pathname)
  );
}

export function isRedirectAllowed(candidate: string, clientUrl: string, allowed: readonly string[]): boolean {
  return [clientUrl, ...allowed].some((rule) => matchesAllowedUrl(candidate, rule));
}

/** The built-in OAuth2 login page's path under the auth API (src/oauth2/page). */
export const LOGIN_PAGE_PATH = "/oauth2/interaction";

/** Where the built-in OAuth2 login page lives, when it is served. */
function builtInLoginPage(config: Config): string | null {
  if (!config.AUTH_OAUTH2_PROVIDER_ENABLED || config.AUTH_OAUTH2_PROVIDER_LOGIN_URL) return null;
  return `${config.AUTH_SERVER_URL}${LOGIN_PAGE_PATH}`;
}

/**
 * The deployment's allow-list. The built-in OAuth2 login page is on it when it is served: a magic link asked for on
 * that page comes back to it, on this service's own origin.
 */
export function isRedirectAllowedBy(config: Config, candidate: string): boolean {
  const page = builtInLoginPage(config);
  const rules = [...config.AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS, ...(page ? [page] : [])];
  return isRedirectAllowed(candidate, config.AUTH_CLIENT_URL, rules);
}

/** Adds query parameters to a redirect target, keeping its own query and fragment. */
export function withQuery(target: string, params: Record<string, string>): string {
  const url = new URL(target);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}
