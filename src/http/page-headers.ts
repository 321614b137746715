import type { Context } from "hono";

/**
 * The headers of every server-rendered page (the OAuth2 sign-in page, the development inbox, the admin console): a
 * CSP that allows nothing but the page's own nonce'd style (and script, when it has one), forms posting to itself
 * (and `formAction` targets), no framing, no referrer leaving the origin, no type sniffing. Returns the nonce.
 */
export function setPageHeaders(
  c: Context,
  options: {
    formAction?: string[];
    script?: boolean;
    connect?: boolean;
    /** Outside origins the page's script reaches besides its own (the FedCM config of Google's One Tap). */
    connectOrigins?: string[];
    /** One outside origin whose script and frames the page embeds (Cloudflare Turnstile's), only when it does. */
    widgetOrigin?: string;
    /** Origins the page shows images from (the console's previews of stored images). */
    images?: string[];
  } = {},
): string {
  const nonce = crypto.randomUUID().replace(/-/g, "");
  const formAction = ["'self'", ...(options.formAction ?? [])].join(" ");
  const widget = options.widgetOrigin ? ` ${options.widgetOrigin}` : "";
  const connect = ["'self'", ...(options.connectOrigins ?? [])].join(" ");
  const scripting =
    options.script || options.widgetOrigin
      ? `; script-src 'nonce-${nonce}'${widget}${options.connect ? `; connect-src ${connect}` : ""}${
          options.widgetOrigin ? `; frame-src ${options.widgetOrigin}` : ""
        }`
      : "";
  const images = options.images?.length ? `; img-src ${options.images.join(" ")}` : "";
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'${scripting}${images}`,
  );
  c.header("X-Frame-Options", "DENY");
  // Not `no-referrer`: with it browsers send `Origin: null` on a page's own form posts, which the CSRF checks need.
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Content-Type-Options", "nosniff");
  return nonce;
}
