// Shared by the token exchange, JWT bearer and ID-JAG tests: an identity provider of the test's own (a key pair, its
// JWKS inline or published at the fake outside host), the assertions it signs, a client that trusts it, and
// openid-client's requests sent to the service in this process.
import { env } from "cloudflare:test";
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import type { WireClient } from "../../src/oauth2/clients";
import type { TestService } from "../helpers";
import { basic, ISSUER, newClient, postForm } from "./support";

export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const DOCS = "https://client-docs.fake";

export interface FakeIdp {
  issuer: string;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** An assertion with sane defaults (`aud` this server, five minutes, a fresh jti), `claims` on top. */
  sign(claims: JWTPayload, header?: { typ?: string; alg?: string; kid?: string }): Promise<string>;
}

export async function fakeIdp(alg: "ES256" | "RS256" = "ES256"): Promise<FakeIdp> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `k-${crypto.randomUUID().slice(0, 8)}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  const issuer = `https://idp-${crypto.randomUUID().slice(0, 8)}.example.com`;
  return {
    issuer,
    kid,
    privateKey,
    publicJwk,
    sign(claims, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ jti: crypto.randomUUID(), ...claims })
        .setProtectedHeader({
          alg: header.alg ?? alg,
          kid: header.kid ?? kid,
          ...(header.typ ? { typ: header.typ } : {}),
        })
        .setIssuer(typeof claims.iss === "string" ? claims.iss : issuer)
        .setAudience((claims.aud as string | string[] | undefined) ?? ISSUER)
        .setIssuedAt(typeof claims.iat === "number" ? claims.iat : now)
        .setExpirationTime(typeof claims.exp === "number" ? claims.exp : now + 300)
        .sign(privateKey);
    },
  };
}

/** Publishes a key set at a fresh path of the fake outside host (or again at `url`); returns its URL. */
export async function publishKeys(keys: JWK[], url?: string): Promise<string> {
  const path = url ? new URL(url).pathname : `/jwks/${crypto.randomUUID()}.json`;
  await env.OUTBOUND!.fetch(`${DOCS}/__doc?path=${encodeURIComponent(path)}`, {
    method: "PUT",
    body: JSON.stringify({ keys }),
  });
  return `${DOCS}${path}`;
}

/** How often the service fetched `url` from the fake host. */
export const fetchesOf = async (url: string) =>
  (await (await env.OUTBOUND!.fetch(`${DOCS}/__fetches?path=${new URL(url).pathname}`)).json()) as number;

/** A confidential client allowed the JWT bearer grant, trusting `idp` (keys inline unless `jwksUri`). */
export function trustingClient(
  svc: TestService,
  idp: FakeIdp,
  body: Record<string, unknown> = {},
  jwksUri?: string,
): Promise<WireClient> {
  return newClient(svc, {
    clientName: "Enterprise app",
    redirectUris: [],
    grantTypes: [JWT_BEARER],
    trustedIssuers: [
      { issuer: idp.issuer, ...(jwksUri ? { jwksUri } : { jwks: { keys: [idp.publicJwk] } }) },
    ],
    ...body,
  });
}

export const redeem = (
  svc: TestService,
  client: WireClient,
  assertion: string,
  extra: Record<string, string> = {},
) => postForm(svc, "/oauth2/token", { grant_type: JWT_BEARER, assertion, ...extra }, basic(client));

/** openid-client's `customFetch`: its requests go to the service in this process (checked against the OpenAPI document). */
export function viaService(on: TestService) {
  return (url: string, options: { method?: string; headers?: unknown; body?: unknown }) =>
    on.request(options.method ?? "GET", url, {
      headers: options.headers as Record<string, string>,
      body: options.body as BodyInit | undefined,
    });
}
