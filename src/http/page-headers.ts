import type { Context } from "hono";

/**
 * The headers of every server-rendered page (the OAuth2 sign-in page, the development inbox, the admin console): a
 * CSP that allows nothing but the page's own nonce'd style (and script, when it has one), forms posting to itself
 * (and `formAction` targets), no framing, no referrer leaving the origin, no type sniffing. Returns the nonce.
 */
export function setPageHeaders(
  c: Context,
  options: { formAction?: string[]; script?: boolean; connect?: boolean } = {},
): string {
  const nonce = crypto.randomUUID().replace(/-/g, "");
  const formAction = ["'self'", ...(options.formAction ?? [])].join(" ");
  const scripting = options.script
    ? `; script-src 'nonce-${nonce}'${options.connect ? "; connect-src 'self'" : ""}`
    : "";
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'${scripting}`,
  );
  c.header("X-Frame-Options", "DENY");
  // Not `no-referrer`: with it browsers send `Origin: null` on a page's own form posts, which the CSRF checks need.
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Content-Type-Options", "nosniff");
  return nonce;
}
