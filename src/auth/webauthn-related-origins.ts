import { parse } from "tldts";
import { ConfigError } from "../errors";
import { isLoopbackHost } from "../lib/loopback";

/**
 * `AUTH_WEBAUTHN_RELATED_ORIGINS` (WebAuthn L3 §5.11, "Using Web Authentication across related origins"): the
 * origins whose ceremonies are accepted for the one RP ID, served as `GET /.well-known/webauthn`
 * (`{"origins":[...]}`). Browsers read that file at `https://<RP ID>/.well-known/webauthn` and honour at most five
 * distinct registrable-domain labels (§5.11.1: the label is the registrable domain without its public suffix, so
 * `example.com` and `example.co.uk` are one label), so a longer list would work for some origins and silently not for
 * others: it stops the start instead. Checked at start, each refusal naming the variable.
 */

const VARIABLE = "AUTH_WEBAUTHN_RELATED_ORIGINS";

/** The most labels a browser honours (WebAuthn L3 §5.11.1, the client's maximum "at least five"; Chrome's is 5). */
export const MAX_RELATED_LABELS = 5;

const refuse = (why: string) => new ConfigError(`invalid configuration: ${VARIABLE}: ${why}`);

const isLocalhost = (host: string) => host === "localhost" || host.endsWith(".localhost");

/**
 * The label an origin counts under: its registrable domain without the public suffix (the ICANN and private sections
 * of the Public Suffix List, through tldts); `localhost` for the developer's own machine. A host with no registrable
 * domain (an IP address, a bare public suffix such as `co.uk` or `github.io`) can be no RP's related origin.
 */
function labelOf(origin: string, host: string): string {
  if (isLocalhost(host)) return "localhost";
  const parsed = parse(host, { allowPrivateDomains: true });
  if (parsed.isIp || isLoopbackHost(host) || !parsed.domain || !parsed.domainWithoutSuffix) {
    throw refuse(`${origin} has no registrable domain`);
  }
  return parsed.domainWithoutSuffix;
}

/** One origin exactly as a browser's `clientDataJSON.origin` carries it: scheme, host, port; nothing else. */
function checkedOrigin(value: string): { origin: string; label: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse(`${value} is not an origin`);
  }
  if (url.origin === "null" || url.origin !== value.replace(/\/$/, "")) {
    throw refuse(`${value} is not an origin (scheme://host[:port], no path)`);
  }
  const host = url.hostname;
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLocalhost(host))) {
    throw refuse(`${value} is not https (plain http only for localhost)`);
  }
  return { origin: url.origin, label: labelOf(value, host) };
}

/**
 * The related origins, checked: each an https origin (http only for localhost) with a registrable domain, at most
 * five labels among them, and every one of the RP's own origins (`AUTH_WEBAUTHN_RP_ORIGINS`) among them: the file
 * is the whole list a browser is told. Empty: none configured (no `/.well-known/webauthn`).
 */
export function relatedOrigins(values: string[], rpOrigins: string[]): string[] {
  if (values.length === 0) return [];
  const checked = values.map(checkedOrigin);
  const labels = new Set(checked.map((entry) => entry.label));
  if (labels.size > MAX_RELATED_LABELS) {
    throw refuse(
      `${labels.size} registrable-domain labels (${[...labels].join(", ")}); browsers honour at most ${MAX_RELATED_LABELS}`,
    );
  }
  const origins = [...new Set(checked.map((entry) => entry.origin))];
  const missing = rpOrigins.filter((origin) => !origins.includes(origin.replace(/\/$/, "")));
  if (missing.length > 0) {
    throw refuse(`must include every AUTH_WEBAUTHN_RP_ORIGINS origin (missing ${missing.join(", ")})`);
  }
  return origins;
}
