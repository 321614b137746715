// Shared by the service binding's tests: calls that cross a real service binding, made by the consumer Worker
// (test/fakes/binding-consumer.js) the runner reaches as BINDING_CONSUMER, and hand-made DPoP proofs (jose).
import { env } from "cloudflare:test";
import { base64url, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

/** Where the consumer Worker pretends to be deployed: the URL a DPoP proof for it names. */
export const API = "https://api.example.com/things";

/** An answer that crossed the binding, as the consumer's JSON: each test reads and checks its fields. */
// biome-ignore lint/suspicious/noExplicitAny: the answers are the wire's JSON, read by each test
type Answer = any;

/** `AUTH.authenticate` of a request to the consumer with these headers (and `options`, JSON in the query). */
export async function authenticateThrough(
  headers: Record<string, string>,
  { method = "GET", url = API, options }: { method?: string; url?: string; options?: unknown } = {},
): Promise<Answer> {
  const target = new URL(url);
  if (options !== undefined) target.searchParams.set("binding-options", JSON.stringify(options));
  const response = await env.BINDING_CONSUMER.fetch(target, { method, headers });
  if (response.status !== 200) throw new Error(`consumer: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { answer: unknown }).answer;
}

/** `env[binding][method](...args)` in the consumer: AUTH (AuthService) or ADMIN (AuthAdmin, caller billing-worker). */
export async function rpc(binding: "AUTH" | "ADMIN", method: string, ...args: unknown[]): Promise<Answer> {
  const response = await env.BINDING_CONSUMER.fetch("https://consumer.test/__rpc", {
    method: "POST",
    body: JSON.stringify({ binding, method, args }),
  });
  if (response.status !== 200) throw new Error(`consumer: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { answer: unknown }).answer;
}

/** A DPoP key (ES256) and a maker of proofs by it for one request (RFC 9449 §4.2). */
export async function dpopKey() {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = (await exportJWK(publicKey)) as JWK;
  return {
    proof: async (htm: string, htu: string, accessToken?: string) => {
      const ath = accessToken
        ? base64url.encode(
            new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken))),
          )
        : undefined;
      return new SignJWT({ htm, htu, jti: crypto.randomUUID(), ...(ath ? { ath } : {}) })
        .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk })
        .setIssuedAt()
        .sign(privateKey);
    },
  };
}
