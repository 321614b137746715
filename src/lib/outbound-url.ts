import type { Config } from "../config";
import { isLoopbackHost } from "./loopback";

/**
 * The outbound-URL policy of contract §1, for every URL the service fetches on someone else's say-so: client ID
 * metadata documents now; webhook and hook URLs registered through the API, IdP discovery and SAML metadata URLs and
 * back-channel logout URIs when they come. A pure check of the URL's text (this file) and a fetch that keeps to the
 * policy's bounds (outbound-fetch.ts). URLs the operator sets in configuration (SMTP, GraphQL, HIBP) are trusted and
 * do not come here.
 *
 * The check refuses what the URL itself says is not a public https service (OWASP SSRF Prevention Cheat Sheet):
 * another scheme, credentials, an IP literal in any spelling, and names that are local by definition. Workers have no
 * DNS resolver, so a public name that resolves to a private address cannot be refused here (docs/oauth2.md says so).
 */

export interface OutboundPolicy {
  /**
   * `AUTH_OUTBOUND_ALLOW_LOCAL` while `AUTH_SERVER_URL` is local (`config.outbound.allowLocal`): loopback hosts are
   * allowed, over http too, so that tests and a developer's machine can serve what production fetches over https.
   */
  allowLoopback: boolean;
  /** Host names the URL must not name, `*` standing for one DNS label: the service's own hosts. */
  refusedHosts: readonly string[];
  /** Loopback ports the URL must not name (with `allowLoopback`: the service's own port on this machine). */
  refusedLoopbackPorts: readonly string[];
}

export type OutboundUrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const MAX_URL_LENGTH = 2048;

/** Names that never leave the machine or the site (RFC 6761 §6.3 localhost, RFC 6762 .local, ICANN's .internal). */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal"];

/** The URL parser lower-cases host names and writes every IPv4 spelling as dotted decimal; a final dot is dropped. */
const hostnameOf = (url: URL) => url.hostname.replace(/\.$/, "");

/** `https://2130706433/`, `https://0x7f.1/`, `https://0177.0.0.1/` all parse to `127.0.0.1`; IPv6 keeps brackets. */
const isIpLiteral = (host: string) => /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith("[");

const effectivePort = (url: URL) => url.port || (url.protocol === "https:" ? "443" : "80");

function matchesHost(pattern: string, host: string): boolean {
  const want = pattern.split(".");
  const have = host.split(".");
  return want.length === have.length && want.every((label, i) => label === "*" || label === have[i]);
}

/**
 * The service's own hosts, which a URL fetched on someone else's say-so must not name: a file the service serves
 * (storage, a presigned URL, a public bucket) or a page of an app it redirects to would pass for the outside party's
 * own words. Host names compare without their port: a Worker on a route answers on Cloudflare's other https ports
 * too. With local fetches allowed, loopback URLs of the service compare by port: every port is another program there.
 */
export function outboundPolicy(config: Pick<Config, "outbound" | "urls">): OutboundPolicy {
  const refusedHosts: string[] = [];
  const refusedLoopbackPorts: string[] = [];
  const own = [config.urls.server, config.urls.storage, config.urls.client, ...config.urls.allowedRedirects];
  for (const value of own) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      continue;
    }
    // An app's own scheme (com.example.app://cb) names no host on the web.
    if (url.protocol !== "https:" && url.protocol !== "http:") continue;
    const host = hostnameOf(url);
    if (config.outbound.allowLocal && isLoopbackHost(host)) refusedLoopbackPorts.push(effectivePort(url));
    else refusedHosts.push(host);
  }
  return { allowLoopback: config.outbound.allowLocal, refusedHosts, refusedLoopbackPorts };
}

/** Whether `value` may be fetched under `policy`; the reason when not, fit to show (it only restates the URL). */
export function checkOutboundUrl(value: string, policy: OutboundPolicy): OutboundUrlVerdict {
  if (value.length > MAX_URL_LENGTH) return { ok: false, reason: `longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: "not an absolute URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "a URL with credentials" };
  const host = hostnameOf(url);
  const web = url.protocol === "https:" || url.protocol === "http:";
  if (policy.allowLoopback && web && isLoopbackHost(host)) {
    if (policy.refusedLoopbackPorts.includes(effectivePort(url))) {
      return { ok: false, reason: "a host of this service" };
    }
    return { ok: true, url };
  }
  if (url.protocol !== "https:") return { ok: false, reason: "not https" };
  if (isIpLiteral(host)) return { ok: false, reason: "an IP address, not a host name" };
  if (host === "localhost" || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return { ok: false, reason: "a local host name" };
  }
  // A name without a dot is resolved against the machine's search domains, never on the public Internet.
  if (!host.includes(".")) return { ok: false, reason: "a local host name" };
  if (policy.refusedHosts.some((pattern) => matchesHost(pattern, host))) {
    return { ok: false, reason: "a host of this service" };
  }
  return { ok: true, url };
}
