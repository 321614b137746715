import { Hono } from "hono";
import { z } from "zod";
import pkg from "../../package.json";
import { getKeySet } from "../signing-keys/keys";
import type { AppEnv } from "./app-env";
import { OK_ANSWER, operation } from "./documented";

/** A JSON Web Key Set of public signing keys (RFC 7517). */
export const jwksSchema = z.object({
  keys: z.array(
    z.looseObject({
      kid: z.string(),
      kty: z.string(),
      alg: z.string(),
      use: z.string(),
      n: z.string().optional(),
      e: z.string().optional(),
    }),
  ),
});

/** getJWKs, getVersion, healthCheckGet/Head (contract §3.1). */
export const systemRoutes = new Hono<AppEnv>()
  .get(
    "/.well-known/jwks.json",
    operation({
      summary: "Signing keys (JWKS)",
      description:
        "The public keys that verify this service's access tokens: the key that signs now and those still " +
        "published after a rotation. Point Hasura (`HASURA_GRAPHQL_JWT_SECRET` with `jwk_url`) or any JWT verifier " +
        "here. Cacheable for five minutes: a new key is published before it signs.",
      answers: { 200: { description: "The key set.", schema: jwksSchema } },
    }),
    async (c) => {
      const { jwks } = await getKeySet(c.var.config);
      // Verifiers may cache briefly; a new key is published before it signs (docs/operations.md), so 5 min is safe.
      c.header("Cache-Control", "public, max-age=300");
      return c.json({ keys: jwks });
    },
  )
  .get(
    "/version",
    operation({
      summary: "Version",
      description: "The service's version.",
      answers: { 200: { description: "The version.", schema: z.object({ version: z.string() }) } },
    }),
    (c) => c.json({ version: pkg.version }),
  )
  // Hono answers HEAD with the GET handler's headers and no body.
  .get(
    "/healthz",
    operation({
      summary: "Health check",
      description: 'Answers `"OK"` while the Worker runs (HEAD answers the same status with no body).',
      answers: { 200: OK_ANSWER("The service runs.") },
    }),
    (c) => c.json("OK"),
  );
