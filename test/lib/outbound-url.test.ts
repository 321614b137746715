// The outbound-URL policy of contract §1, the plumbing every URL fetched on someone else's say-so goes through
// (client metadata documents now; webhooks, IdP discovery, SAML metadata and back-channel logout later). Threats:
// server-side request forgery towards loopback, private, link-local and cloud-metadata addresses in any spelling the
// URL parser accepts; credentials smuggled in a URL; the service fetching its own files as an outside party's words;
// a slow or endless answer holding the request (a fetcher that ignores the abort turned it into a 500); redirects
// that lead somewhere the check never saw; and error texts that map which hosts and ports answer.

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  fetchOutbound,
  isJsonMediaType,
  OutboundFetchError,
  OutboundUrlRefused,
} from "../../src/lib/outbound-fetch";
import { checkOutboundUrl, type OutboundPolicy, outboundPolicy } from "../../src/lib/outbound-url";
import { getConfig } from "../../src/runtime/config";

const PUBLIC: OutboundPolicy = { allowLoopback: false, refusedHosts: [], refusedLoopbackPorts: [] };
const LOCAL: OutboundPolicy = { allowLoopback: true, refusedHosts: [], refusedLoopbackPorts: ["8787"] };

const refusal = (value: string, policy: OutboundPolicy = PUBLIC) => {
  const verdict = checkOutboundUrl(value, policy);
  return verdict.ok ? null : verdict.reason;
};

describe("checkOutboundUrl", () => {
  it("accepts a public https URL", () => {
    expect(refusal("https://client.example.com/oauth/client.json")).toBeNull();
    expect(refusal("https://xn--bcher-kva.example/doc")).toBeNull();
  });

  it("refuses IP literals whatever their spelling, after the URL parser normalised them", () => {
    for (const value of [
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0x7f.1/",
      "https://017700000001/",
      "https://127.1/",
      "https://127.0.0.1./",
      "https://0/",
      "https://10.1/",
      "https://169.254.169.254/latest/meta-data/",
      "https://100.64.0.1/",
      "https://8.8.8.8/", // public, but still a literal: a name is what can be refused or allowed by policy
      "https://[::1]/",
      "https://[::]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[0:0:0:0:0:ffff:a00:1]/",
      "https://[fe80::1]/",
      "https://[fc00::1]/",
      "https://[2001:db8::1]/",
    ]) {
      expect(refusal(value), value).toBe("an IP address, not a host name");
    }
  });

  it("refuses names that are local by definition, and names without a dot", () => {
    for (const value of [
      "https://localhost/",
      "https://LOCALHOST./",
      "https://app.localhost/",
      "https://nas.local/",
      "https://metadata.google.internal/",
      "https://db.internal./",
      "https://intranet/",
    ]) {
      expect(refusal(value), value).toBe("a local host name");
    }
  });

  it("refuses other schemes, credentials, and what is not a URL", () => {
    expect(refusal("http://client.example.com/")).toBe("not https");
    expect(refusal("ftp://client.example.com/")).toBe("not https");
    expect(refusal("file:///etc/passwd")).toBe("not https");
    expect(refusal("https://user:pass@client.example.com/")).toBe("a URL with credentials");
    expect(refusal("https://user@client.example.com/")).toBe("a URL with credentials");
    expect(refusal("/relative")).toBe("not an absolute URL");
    expect(refusal(`https://client.example.com/${"a".repeat(2100)}`)).toContain("longer than");
  });

  it("AUTH_OUTBOUND_ALLOW_LOCAL lets loopback through, over http too, but never the service's own port", () => {
    expect(refusal("http://127.0.0.1:9000/doc", LOCAL)).toBeNull();
    expect(refusal("http://localhost:9000/doc", LOCAL)).toBeNull();
    expect(refusal("https://[::1]:9000/doc", LOCAL)).toBeNull();
    expect(refusal("http://localhost:8787/storage/v1/files/x", LOCAL)).toBe("a host of this service");
    expect(refusal("http://127.0.0.1:8787/x", LOCAL)).toBe("a host of this service");
    // Only loopback: private addresses stay refused.
    expect(refusal("http://10.0.0.1/", LOCAL)).toBe("not https");
    expect(refusal("https://192.168.0.1/", LOCAL)).toBe("an IP address, not a host name");
  });

  it("the service's own hosts come from its configuration; the switch counts only on a local server", () => {
    const production = getConfig({
      ...env,
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      STORAGE_SERVER_URL: "https://files.example.com",
      AUTH_CLIENT_URL: "https://app.example.com",
      AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://*.partner.example,com.example.app://cb",
      AUTH_DEV_MAILBOX: "false",
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    });
    const policy = outboundPolicy(production);
    expect(policy).toEqual({
      allowLoopback: false,
      refusedHosts: ["auth.example.com", "files.example.com", "app.example.com", "*.partner.example"],
      refusedLoopbackPorts: [],
    });
    expect(refusal("https://auth.example.com:8443/x", policy)).toBe("a host of this service");
    expect(refusal("https://eu.partner.example/x", policy)).toBe("a host of this service");
    expect(refusal("https://a.b.partner.example/x", policy)).toBeNull();
    expect(refusal("http://127.0.0.1:9/x", policy)).toBe("not https");

    const local = outboundPolicy(getConfig({ ...env, AUTH_OUTBOUND_ALLOW_LOCAL: "true" }));
    expect(local.allowLoopback).toBe(true);
    expect(local.refusedLoopbackPorts).toEqual(["8787", "8787", "3000"]);
    expect(outboundPolicy(getConfig({ ...env })).allowLoopback).toBe(false);
  });
});

describe("fetchOutbound", () => {
  const LIMITS = { timeoutMs: 50, maxBytes: 64, accept: "application/json", mediaType: isJsonMediaType };
  const URL_ = "https://client.example.com/doc.json";
  const json = (body: string, init: ResponseInit = {}) =>
    new Response(body, { ...init, headers: { "content-type": "application/json", ...init.headers } });

  /** The error it throws, which must say nothing of the cause but keep it as the reason. */
  async function failure(fetcher: typeof fetch, url = URL_): Promise<OutboundFetchError> {
    const error = await fetchOutbound(fetcher, url, PUBLIC, LIMITS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboundFetchError);
    expect((error as Error).message).toBe("the URL could not be fetched");
    return error as OutboundFetchError;
  }

  it("returns a small JSON answer, asking for it with no redirects followed", async () => {
    let seen: RequestInit | undefined;
    const answer = await fetchOutbound(
      async (_url, init) => {
        seen = init;
        return json('{"a":1}', { headers: { "cache-control": "max-age=60" } });
      },
      URL_,
      PUBLIC,
      LIMITS,
    );
    expect(answer).toMatchObject({ status: 200, text: '{"a":1}' });
    expect(answer.headers.get("cache-control")).toBe("max-age=60");
    expect(seen?.redirect).toBe("manual");
    expect(new Headers(seen?.headers).get("accept")).toBe("application/json");
  });

  it("refuses a URL the policy refuses without calling the fetcher", async () => {
    let called = false;
    const fetcher = async () => {
      called = true;
      return json("{}");
    };
    await expect(fetchOutbound(fetcher, "https://10.0.0.1/x", PUBLIC, LIMITS)).rejects.toBeInstanceOf(
      OutboundUrlRefused,
    );
    expect(called).toBe(false);
  });

  it("gives up in time on a fetcher that ignores the abort, and on a body that never ends", async () => {
    const started = Date.now();
    const hanging = await failure(() => new Promise<Response>(() => {}));
    expect(hanging.reason).toContain("unreachable");
    const stalled = await failure(async () => {
      const { readable, writable } = new TransformStream();
      void writable.getWriter().write(new TextEncoder().encode("{"));
      return new Response(readable, { headers: { "content-type": "application/json" } });
    });
    expect(stalled.reason).toContain("body could not be read");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("refuses redirects, other statuses, other media types and bodies past the bound, all in the same words", async () => {
    const reasons = [
      (
        await failure(
          async () => new Response(null, { status: 302, headers: { location: "https://10.0.0.1/" } }),
        )
      ).reason,
      (await failure(async () => json("{}", { status: 404 }))).reason,
      (await failure(async () => new Response("<html>", { headers: { "content-type": "text/html" } })))
        .reason,
      (await failure(async () => json("x".repeat(65)))).reason,
      (await failure(async () => json("{}", { headers: { "content-length": "100000" } }))).reason,
      (await failure(async () => Promise.reject(new TypeError("connection refused")))).reason,
    ];
    expect(reasons).toEqual([
      expect.stringContaining("redirect"),
      "answered 404",
      expect.stringContaining("text/html"),
      expect.stringContaining("larger than 64"),
      expect.stringContaining("announced 100000"),
      "unreachable: TypeError",
    ]);
  });

  it("JSON means application/json or a +json type", () => {
    expect(isJsonMediaType("application/json")).toBe(true);
    expect(isJsonMediaType("application/ld+json")).toBe(true);
    expect(isJsonMediaType("application/problem+json")).toBe(true);
    expect(isJsonMediaType("text/json+html")).toBe(false);
    expect(isJsonMediaType("text/plain")).toBe(false);
    expect(isJsonMediaType("application/jsonp")).toBe(false);
  });
});
