// Client ID metadata documents (contract §3.6): an https client_id names the client's own JSON document. Threats: a
// document that claims another client's identity (its client_id differs from its URL), a redirect to a URI the
// document does not list, the server made to follow redirects or read an endless body (SSRF amplification, memory),
// a document fetched on every request (the server as a traffic amplifier), a loopback document accepted in
// production, and a person misled by the name a document gives itself (the consent screen shows its host).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forgetOAuth2Client } from "../../src/oauth2/client-cache";
import type { WireClient } from "../../src/oauth2/clients";
import { decodeJwt, signUp, uniqueEmail } from "../helpers";
import { Browser, signIn } from "./page-browser";
import { location, oauth2Error, postForm, provider, requestIdOf, s256, VERIFIER } from "./support";

const svc = provider();
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const DOCS = "https://client-docs.fake";

/** Publishes a document at a fresh path of the fake host; returns its URL (the client id). */
async function publish(document: (url: string) => unknown, cacheControl?: string): Promise<string> {
  const path = `/mcp/${crypto.randomUUID()}.json`;
  const url = `${DOCS}${path}`;
  const query = new URLSearchParams({ path, ...(cacheControl ? { "cache-control": cacheControl } : {}) });
  await env.OUTBOUND!.fetch(`${DOCS}/__doc?${query}`, {
    method: "PUT",
    body: JSON.stringify(document(url)),
  });
  return url;
}

const fetchesOf = async (url: string) =>
  (await (await env.OUTBOUND!.fetch(`${DOCS}/__fetches?path=${new URL(url).pathname}`)).json()) as number;

const agentDocument = (url: string) => ({
  client_id: url,
  client_name: "Claude-like Agent",
  client_uri: "https://client-docs.fake",
  redirect_uris: ["http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  token_endpoint_auth_method: "none",
});

async function authorizeAs(clientId: string, redirectUri = "http://127.0.0.1:47011/callback") {
  return svc.request(
    "GET",
    `/oauth2/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid offline_access",
      state: "s",
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
    })}`,
  );
}

describe("client ID metadata documents", () => {
  it("a document's URL is a client id: authorize, sign in, exchange, refresh, as a public native client", async () => {
    const clientId = await publish(agentDocument);
    const requestId = await requestIdOf(await authorizeAs(clientId));
    const session = await signUp(svc);
    const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    expect(completed.status).toBe(200);
    const redirect = new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
    expect(redirect.origin).toBe("http://127.0.0.1:47011");
    const tokens = await postForm(svc, "/oauth2/token", {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      redirect_uri: "http://127.0.0.1:47011/callback",
      client_id: clientId,
      code_verifier: VERIFIER,
    });
    expect(tokens.status).toBe(200);
    const answer = (await tokens.json()) as { access_token: string; refresh_token: string };
    expect(decodeJwt(answer.access_token).payload).toMatchObject({ client_id: clientId, aud: clientId });
    const refreshed = await postForm(svc, "/oauth2/token", {
      grant_type: "refresh_token",
      refresh_token: answer.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    // The admin API shows where the client came from.
    const listed = await svc.request("GET", `/admin/oauth2/clients/${encodeURIComponent(clientId)}`, {
      headers: ADMIN,
    });
    expect(await listed.json()).toMatchObject({
      registration: "metadata-document",
      clientName: "Claude-like Agent",
      tokenEndpointAuthMethod: "none",
    } satisfies Partial<WireClient>);
  });

  it("refuses a document whose client_id is not its own URL", async () => {
    const clientId = await publish((url) => ({
      ...agentDocument(url),
      client_id: `${DOCS}/someone-else.json`,
    }));
    const body = await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
    expect(body.error_description).toContain("client_id is not its own URL");
  });

  it("refuses a document without client_name or redirect_uris, or describing a confidential client", async () => {
    for (const change of [
      { client_name: undefined },
      { redirect_uris: undefined },
      { token_endpoint_auth_method: "client_secret_basic" },
      { redirect_uris: ["javascript:alert(1)//"] },
    ]) {
      const clientId = await publish((url) => ({ ...agentDocument(url), ...change }));
      await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
    }
  });

  it("sends the browser only to a redirect URI the document lists", async () => {
    const clientId = await publish(agentDocument);
    await oauth2Error(
      await authorizeAs(clientId, "https://attacker.example/callback"),
      400,
      "invalid_request",
    );
  });

  it("follows no redirect, reads no more than 16 KiB, and needs a 200 answer", async () => {
    for (const [path, why] of [
      ["/redirect/client.json", "redirects are not followed"],
      ["/big.json", "larger than"],
      ["/missing.json", "answered 404"],
    ]) {
      const body = await oauth2Error(await authorizeAs(`${DOCS}${path}`), 401, "invalid_client");
      expect(body.error_description).toContain(why);
    }
    expect(await fetchesOf(`${DOCS}/elsewhere.json`)).toBe(0);
  });

  it("keeps a fetched document as its Cache-Control allows, instead of fetching it for every request", async () => {
    const clientId = await publish(agentDocument, "max-age=3600");
    await requestIdOf(await authorizeAs(clientId));
    forgetOAuth2Client(clientId); // past the isolate's own ten-second cache: KV must answer
    await requestIdOf(await authorizeAs(clientId));
    expect(await fetchesOf(clientId)).toBe(1);
  });

  it("accepts a loopback http document URL on a development server only", async () => {
    const loopbackId = "http://127.0.0.1:9/client.json";
    // Development (the suite's AUTH_SERVER_URL is localhost): it is a document, fetched (here the fake answers 502).
    const dev = await oauth2Error(await authorizeAs(loopbackId), 401, "invalid_client");
    expect(dev.error_description).toContain("metadata document");
    // Production: not a document at all, so an unknown client; nothing is fetched.
    const production = provider({
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      AUTH_DEV_MAILBOX: "false",
    });
    const response = await production.request(
      "GET",
      `/oauth2/authorize?client_id=${encodeURIComponent(loopbackId)}&redirect_uri=${encodeURIComponent("http://127.0.0.1:5/callback")}&response_type=code`,
    );
    const refused = await oauth2Error(response, 401, "invalid_client");
    expect(refused.error_description).toBe("unknown client_id");
  });

  it("the consent screen names the document's host and warns that the app runs on this computer", async () => {
    const clientId = await publish(agentDocument);
    const email = uniqueEmail();
    await signUp(svc, email);
    const browser = new Browser(svc);
    const start = await authorizeAs(clientId);
    const requestId = await requestIdOf(start);
    await browser.get(location(start).toString());
    const consent = await signIn(browser, requestId, email);
    const html = await consent.text();
    expect(html).toContain("Claude-like Agent");
    expect(html).toContain("Published by <strong>client-docs.fake</strong>");
    expect(html).toContain("This app runs on your own computer");
  });
});
