/** Methods that only read (RFC 9110 §9.2.1): a cross-site request may send them, and they change nothing. */
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a request carrying the browser cookie may be taken as its user's: a safe method always; an unsafe one only
 * when the browser says it came from the same site (`Sec-Fetch-Site: same-origin` or `same-site`, Fetch Metadata) or,
 * from a browser without Fetch Metadata, when its `Origin` is the request's own origin. No header at all: refused (a
 * form posted from elsewhere by an old browser says nothing; OWASP CSRF Prevention Cheat Sheet, "Verifying Origin").
 */
export function sameSite(request: Request): boolean {
  if (SAFE.has(request.method.toUpperCase())) return true;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin" || site === "same-site";
  const origin = request.headers.get("origin");
  return origin !== null && origin !== "null" && origin === new URL(request.url).origin;
}
