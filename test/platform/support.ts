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

/**
 * `env[binding][method](...args)` in the consumer: AUTH (AuthService), ADMIN (AuthAdmin, caller billing-worker) or
 * ADMIN_UNNAMED (AuthAdmin bound without `props.caller`), ADMIN_CONTROL and ADMIN_LONG (a caller with control
 * characters, one of 10 kB: test/platform/binding-attacks.test.ts).
 */
export async function rpc(
  binding: "AUTH" | "ADMIN" | "ADMIN_UNNAMED" | "ADMIN_CONTROL" | "ADMIN_LONG",
  method: string,
  ...args: unknown[]
): Promise<Answer> {
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

/**
 * Counts what the binding's calls ask of D1: every statement prepared, batch, exec or session opened on these
 * databases (their methods wrapped on the objects themselves, which the Worker's shards hold), until `restore`.
 */
export function watchD1(...databases: D1Database[]) {
  let calls = 0;
  const restores: (() => void)[] = [];
  for (const db of databases) {
    for (const method of ["prepare", "batch", "exec", "withSession"] as const) {
      const original = db[method] as (...args: unknown[]) => unknown;
      Object.defineProperty(db, method, {
        configurable: true,
        writable: true,
        value: (...args: unknown[]) => {
          calls++;
          return original.apply(db, args);
        },
      });
      restores.push(() =>
        Object.defineProperty(db, method, { configurable: true, writable: true, value: original }),
      );
    }
  }
  return {
    get calls() {
      return calls;
    },
    restore: () => {
      for (const restore of restores) restore();
    },
  };
}

/** A Durable Object namespace that counts the objects asked for (`get`, `getByName`). */
export function countingNamespace<T extends DurableObjectNamespace>(namespace: T) {
  let objects = 0;
  const binding = new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => {
          objects++;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return {
    binding,
    get objects() {
      return objects;
    },
  };
}
