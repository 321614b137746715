import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { operation } from "../../http/documented";

/**
 * `GET /.well-known/webauthn` at the service's origin root (WebAuthn L3 §5.11): the related origins whose
 * ceremonies are accepted for the one RP ID (`AUTH_WEBAUTHN_RELATED_ORIGINS`, src/auth/webauthn-related-origins.ts).
 * A browser reads it at `https://<RP ID>/.well-known/webauthn`: when the RP ID is this service's host, here; when it
 * is the app's domain, the app serves the same JSON there (docs/passkeys.md). Without related origins: 404.
 */
export const webauthnWellKnownRoutes = new Hono<AppEnv>().get(
  "/.well-known/webauthn",
  operation({
    summary: "WebAuthn related origins",
    description:
      "The origins whose passkey ceremonies are accepted for the RP ID (WebAuthn Level 3 §5.11), from " +
      "`AUTH_WEBAUTHN_RELATED_ORIGINS`. 404 `route-not-found` when none are configured.",
    answers: {
      200: { description: "The related origins.", schema: z.object({ origins: z.array(z.string()) }) },
    },
  }),
  (c) => {
    const { relatedOrigins } = c.var.config.webauthn;
    if (relatedOrigins.length === 0) throw new AppError("route-not-found");
    // Browsers fetch it at each cross-origin ceremony; the list changes only with a deployment.
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ origins: relatedOrigins });
  },
);
