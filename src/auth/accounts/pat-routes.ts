import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { operation } from "../../http/documented";
import { jsonBody } from "../../http/validation";
import { metadataSchema } from "../../lib/json-metadata";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { requireElevation } from "../webauthn";
import { createPersonalAccessToken, signInWithPersonalAccessToken } from "./pat";

/** createPAT and signInPAT (contract §3.2, §3.3). */
export const patRoutes = new Hono<AppEnv>()
  .post(
    "/pat",
    operation({
      summary: "Create a personal access token",
      description:
        "A long-lived secret that signs in as this user (`POST /signin/pat`), until `expiresAt` (in the future). " +
        "Stored hashed: shown this once. Needs an elevated token when the user has security keys.",
      security: "elevated",
      answers: {
        200: {
          description: "The token and its id.",
          schema: z.object({ id: z.uuid(), personalAccessToken: z.uuid() }),
        },
      },
    }),
    requireAuth,
    requireElevation(),
    jsonBody(z.object({ expiresAt: z.iso.datetime({ offset: true }), metadata: metadataSchema.optional() })),
    async (c) => {
      const { expiresAt, metadata } = c.req.valid("json");
      const created = await createPersonalAccessToken(c.var.deps, c.var.auth!.sub, {
        expiresAt: new Date(expiresAt),
        metadata,
      });
      return c.json(created);
    },
  )
  .post(
    "/signin/pat",
    operation({
      summary: "Sign in with a personal access token",
      description: "A session for the token's user. Unknown or expired: 401 `invalid-pat`.",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ personalAccessToken: z.uuid() })),
    async (c) => {
      const scope = signInScope(c, "pat");
      const session = await signInWithPersonalAccessToken(scope, c.req.valid("json").personalAccessToken);
      return c.json({ session });
    },
  );
