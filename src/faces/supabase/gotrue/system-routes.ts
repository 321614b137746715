import { Hono } from "hono";
import type { AppEnv } from "../../../http/app-env";
import { getKeySet } from "../../../signing-keys/keys";

/**
 * GoTrue's open endpoints (contract supabase.md §2): `/health`, `/settings` (what the app may offer: auth-js and the
 * Supabase UI read it), and the key set its tokens verify with (auth-js's `getClaims`).
 */
export const goTrueSystemRoutes = new Hono<AppEnv>()
  .get("/health", (c) =>
    c.json({ version: "edge-auth", name: "GoTrue", description: "GoTrue's API, spoken by edge-auth" }),
  )
  .get("/settings", (c) => {
    const { config } = c.var;
    return c.json({
      external: {
        email: true,
        phone: config.passwordless.sms,
        anonymous_users: config.passwordless.anonymous,
        ...Object.fromEntries(Object.keys(config.providers.enabled).map((name) => [name, true])),
      },
      disable_signup: config.signUp.disabled,
      mailer_autoconfirm: !config.signUp.emailVerifiedRequired,
      phone_autoconfirm: false,
      sms_provider: config.sms.provider ?? "",
      saml_enabled: false,
    });
  })
  .get("/.well-known/jwks.json", async (c) => {
    const { jwks } = await getKeySet(c.var.config);
    c.header("Cache-Control", "public, max-age=600");
    return c.json({ keys: jwks });
  });
