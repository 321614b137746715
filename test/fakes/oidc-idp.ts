// Global setup of the Workers tests: a real OpenID Connect provider (panva's `oidc-provider`, the certified
// implementation) on loopback, for enterprise OIDC connections (test/sso/). Around it, on the same port:
// - `POST /__clients {client_id, client_secret, redirect_uris}` registers a client (each test's connection has its own
//   callback URL);
// - `POST /__accounts {sub, email, email_verified?, name?, groups?, tamper?}` puts a person at the IdP; `tamper` makes
//   the token endpoint's ID token for that person a forgery (wrong iss, aud or nonce, expired, or signed with a key the
//   IdP never published): what a compromised or impersonated token endpoint would send;
// - `GET /__drive?url=<authorization URL>&as=<sub>` plays the person's browser at the IdP (cookies, the login and
//   consent interaction) and answers `{location}`: the redirect back to the service's callback;
// - `GET /dns-query?name=&type=TXT` is a DNS-over-HTTPS JSON resolver whose TXT records `POST /__dns {name, values}`
//   sets (domain verification).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
// @ts-expect-error: oidc-provider ships no type declarations
import Provider from "oidc-provider";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    oidcIdpUrl: string;
  }
}

export type Tamper = "issuer" | "audience" | "nonce" | "expired" | "other-key" | "no-signature";

interface Account {
  sub: string;
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
  tamper?: Tamper;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * oidc-provider's storage: a plain map for this process (the library's own in-memory adapter works too, but warns on
 * every run, and tests print nothing unless they fail).
 */
const stored = new Map<string, Record<string, unknown>>();
class MapAdapter {
  constructor(private readonly model: string) {}
  private key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: Record<string, unknown>) {
    stored.set(this.key(id), payload);
    if (typeof payload.uid === "string") stored.set(`${this.model}:uid:${payload.uid}`, { id });
  }
  async find(id: string) {
    return stored.get(this.key(id));
  }
  async findByUid(uid: string) {
    const ref = stored.get(`${this.model}:uid:${uid}`);
    return ref ? this.find(String(ref.id)) : undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const payload = stored.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    stored.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const [key, payload] of stored) if (payload.grantId === grantId) stored.delete(key);
  }
}

export default async function setup(project: TestProject) {
  const KID = "idp-key-1";
  const signing = await generateKeyPair("RS256", { extractable: true });
  const attacker = await generateKeyPair("RS256", { extractable: true });
  const privateJwk = { ...(await exportJWK(signing.privateKey)), kid: KID, alg: "RS256", use: "sig" };
  const accounts = new Map<string, Account>();
  const dns = new Map<string, string[]>();

  const server = createServer();
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    adapter: MapAdapter,
    // Set rather than defaulted: the library notices (prints) every default lifetime it uses.
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
    jwks: { keys: [privateJwk] },
    cookies: { keys: ["test-cookie-key"] },
    features: { devInteractions: { enabled: false } },
    // The claims of the granted scopes go into the ID token itself, where the service reads them.
    conformIdTokenClaims: false,
    claims: { email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    pkce: { required: () => true },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          const { tamper: _t, ...claims } = account;
          return claims;
        },
      };
    },
  });
  const callback = provider.callback();

  /** The ID token of the token endpoint's answer, forged as the person's `tamper` says. */
  async function forge(idToken: string): Promise<string> {
    const claims = decodeJwt(idToken);
    const tamper = accounts.get(String(claims.sub))?.tamper;
    if (!tamper) return idToken;
    const now = Math.floor(Date.now() / 1000);
    const changed = { ...claims };
    if (tamper === "issuer") changed.iss = "http://127.0.0.1:1/another-issuer";
    if (tamper === "audience") changed.aud = "another-client";
    if (tamper === "nonce") changed.nonce = "a-nonce-from-another-sign-in";
    if (tamper === "expired") Object.assign(changed, { iat: now - 7200, exp: now - 3600 });
    if (tamper === "no-signature") {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
      return `${encode({ alg: "none", typ: "JWT" })}.${encode(changed)}.`;
    }
    const key = tamper === "other-key" ? attacker.privateKey : signing.privateKey;
    return new SignJWT(changed).setProtectedHeader({ alg: "RS256", kid: KID, typ: "JWT" }).sign(key);
  }

  /** Lets oidc-provider answer the token request, then forges its ID token when the person asks for it. */
  function tamperingTokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    (res as unknown as { end: (chunk?: unknown) => void }).end = (chunk?: unknown) => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(String(chunk ?? ""));
      } catch {
        end(chunk);
        return;
      }
      if (typeof body.id_token !== "string") {
        end(chunk);
        return;
      }
      forge(body.id_token).then((idToken) => {
        const text = JSON.stringify({ ...body, id_token: idToken });
        res.setHeader("content-length", Buffer.byteLength(text));
        end(text);
      });
    };
    callback(req, res);
  }

  /** The person at the IdP: logs in as `as` (or whoever `login_hint` names) and consents to what was asked. */
  async function interaction(req: IncomingMessage, res: ServerResponse, url: URL) {
    const details = await provider.interactionDetails(req, res);
    const hinted = [...accounts.values()].find((a) => a.email === details.params.login_hint)?.sub;
    const accountId = url.searchParams.get("as") ?? hinted;
    if (!accountId || !accounts.has(accountId)) {
      await provider.interactionFinished(req, res, {
        error: "access_denied",
        error_description: "no such person",
      });
      return;
    }
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /** Follows the IdP's redirects like a browser with a cookie jar, until one leaves the IdP. */
  async function drive(start: string, as: string | null): Promise<string> {
    const jar = new Map<string, string>();
    let location = start;
    for (let hop = 0; hop < 10; hop++) {
      const url = new URL(location, issuer);
      if (url.origin !== issuer) return url.href;
      if (as && url.pathname.startsWith("/interaction/")) url.searchParams.set("as", as);
      const response = await fetch(url, {
        redirect: "manual",
        headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join("; ") },
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(";");
        const at = pair!.indexOf("=");
        jar.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const next = response.headers.get("location");
      if (!next)
        throw new Error(
          `the IdP stopped at ${url.pathname} with ${response.status}: ${await response.text()}`,
        );
      location = next;
    }
    throw new Error("too many redirects at the IdP");
  }

  server.on("request", async (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    try {
      if (req.method === "POST" && url.pathname === "/__clients") {
        const client = await readJson(req);
        // Stored through the provider's own adapter, where it looks up clients that are not in its configuration.
        await provider.Client.adapter.upsert(client.client_id, {
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_basic",
          ...client,
        });
        return json(res, 201, client);
      }
      if (req.method === "POST" && url.pathname === "/__accounts") {
        const account = (await readJson(req)) as unknown as Account;
        accounts.set(account.sub, account);
        return json(res, 201, account);
      }
      if (req.method === "GET" && url.pathname === "/__drive") {
        return json(res, 200, {
          location: await drive(url.searchParams.get("url")!, url.searchParams.get("as")),
        });
      }
      if (req.method === "POST" && url.pathname === "/__dns") {
        const { name, values } = (await readJson(req)) as { name: string; values: string[] };
        dns.set(name.toLowerCase(), values);
        return json(res, 201, {});
      }
      if (req.method === "GET" && url.pathname === "/dns-query") {
        const name = url.searchParams.get("name")!.toLowerCase();
        const values = dns.get(name) ?? [];
        return json(res, 200, {
          Status: values.length ? 0 : 3,
          Answer: values.map((value) => ({ name, type: 16, TTL: 60, data: `"${value}"` })),
        });
      }
      if (url.pathname.startsWith("/interaction/")) return await interaction(req, res, url);
      if (req.method === "POST" && url.pathname === "/token") return tamperingTokenEndpoint(req, res);
      callback(req, res);
    } catch (error) {
      json(res, 500, { error: String(error) });
    }
  });

  project.provide("oidcIdpUrl", issuer);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
