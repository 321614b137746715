import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { SIGNING_ALGORITHMS } from "../lib/key-algorithms";
import { deleteKey, listKeys, rotateKey } from "./keys";
import { adminKeySchema } from "./wire";

/** Signing keys in the admin API (contract §10). */
export const keyAdminRoutes = new Hono<AppEnv>()
  .get(
    "/keys",
    operation({
      summary: "List signing keys",
      description: "Every published key; `status: signing` marks the one that signs new tokens.",
      security: "admin-secret",
      answers: { 200: { description: "The keys.", schema: pageSchema(adminKeySchema) } },
    }),
    async (c) => c.json({ items: await listKeys(c.var.deps), nextCursor: null }),
  )
  .post(
    "/keys/rotate",
    operation({
      summary: "Rotate the signing key",
      description:
        "A new key signs from now on; the old one stays published so its tokens verify until they expire. " +
        "`alg` (optional body) picks its algorithm: `RS256` (default), `EdDSA` (Ed25519: a fraction of RS256's " +
        "CPU per token, accepted by Hasura's JWT mode) or `ES256`. Tokens of the previous algorithm keep verifying " +
        "with their own key; OpenID Connect ID tokens stay RS256 (the newest RS256 key signs them). Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The new signing key.", schema: adminKeySchema } },
    }),
    jsonBody(z.object({ alg: z.enum(SIGNING_ALGORITHMS).optional() })),
    async (c) => {
      const key = await rotateKey(c.var.deps, c.req.valid("json").alg);
      auditAdminAction(c, "keys.rotate", null, { kid: key.kid, alg: key.alg });
      return c.json(key, 201);
    },
  )
  // `?force=true`: delete even while tokens it signed may be valid (after a leak), see deleteKey.
  .delete(
    "/keys/:kid",
    operation({
      summary: "Delete a retired key",
      description:
        "Stops publishing a key that no longer signs. Refused (400) until its tokens can have expired, unless " +
        "`force=true` (after a leak: its tokens stop verifying at once). The signing key and configured keys cannot be " +
        "deleted. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    queryParams(z.object({ force: z.enum(["true", "false"]).optional() })),
    async (c) => {
      const kid = c.req.param("kid");
      const force = c.req.valid("query").force === "true";
      await deleteKey(c.var.deps, kid, { force });
      auditAdminAction(c, "key.delete", null, { kid, force });
      return c.body(null, 204);
    },
  );
