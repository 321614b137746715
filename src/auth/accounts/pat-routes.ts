import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { jsonBody } from "../../http/validation";
import { metadataSchema } from "../../lib/json-metadata";
import { rateLimit } from "../../rate-limits/middleware";
import { requireElevation } from "../webauthn/elevation";
import { createPersonalAccessToken, signInWithPersonalAccessToken } from "./pat";

/** createPAT and signInPAT (contract §3.2, §3.3). */
export const patRoutes = new Hono<AppEnv>()
  .post(
    "/pat",
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
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ personalAccessToken: z.uuid() })),
    async (c) => {
      const session = await signInWithPersonalAccessToken(
        c.var.deps,
        c.req.valid("json").personalAccessToken,
        c.req.header("user-agent"),
      );
      return c.json({ session });
    },
  );
