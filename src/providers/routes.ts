import { type Context, Hono } from "hono";
import { z } from "zod";
import { type SignUpOptions, signUpOptionsSchema } from "../auth/accounts";
import { completeSignIn, type SignInResult } from "../auth/mfa";
import { requireElevation } from "../auth/webauthn";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { bindBrowser, browserBinding } from "../http/browser-binding";
import type { Deps } from "../http/deps";
import { bodyText, jsonBody } from "../http/validation";
import { rateLimit } from "../rate-limits/middleware";
import { linkIdentity, userForProfile } from "./accounts";
import { ProviderStepError, refreshAtProvider } from "./client";
import { finishProviderSignIn, REQUEST_LIFETIME_MS, startProviderSignIn, takeProviderTokens } from "./flow";
import { profileFromIdToken } from "./id-tokens";
import { isProviderName } from "./registry";

/** The callback's parameters: the query of a GET, or the form of Apple's `response_mode=form_post`. */
async function callbackParams(
  method: string,
  url: string,
  text: () => Promise<string>,
): Promise<Record<string, string>> {
  const source = method === "POST" ? new URLSearchParams(await text()) : new URL(url).searchParams;
  const params: Record<string, string> = {};
  for (const [name, value] of source) if (!(name in params)) params[name] = value.slice(0, 8192);
  return params;
}

const idTokenBody = z.object({
  provider: z.enum(["apple", "google"]),
  idToken: z.string().min(1).max(8192),
  nonce: z.string().min(1).max(512).optional(),
});

/** signInIdToken and the client's sign-up variant: the same user resolution as the redirect flow. */
async function signInByIdToken(
  deps: Deps,
  body: z.infer<typeof idTokenBody> & { options?: SignUpOptions },
  userAgent?: string,
): Promise<SignInResult> {
  const profile = await profileFromIdToken(deps, body.provider, body.idToken, body.nonce);
  const user = await userForProfile(deps, body.provider, profile, body.options ?? {});
  if (user.disabled) throw new AppError("disabled-user");
  return completeSignIn(deps, user, userAgent);
}

/** `signInProviderURL`: the browser gets its binding cookie with the redirect to the provider. */
async function startRoute(c: Context<AppEnv>) {
  const browserHash = await bindBrowser(c, "provider-flow", REQUEST_LIFETIME_MS / 1000);
  return c.redirect(
    await startProviderSignIn(c.var.deps, c.req.param("provider") ?? "", c.req.query(), browserHash),
    302,
  );
}

const signInWithIdToken = [
  rateLimit("BRUTE_FORCE"),
  jsonBody(idTokenBody.extend({ options: signUpOptionsSchema.optional() })),
] as const;

/**
 * signInProviderURL, its callback, getProviderTokens, refreshProviderToken, and the ID-token operations
 * (contract §3.2, §7).
 */
export const providerRoutes = new Hono<AppEnv>()
  .post("/signin/idtoken", ...signInWithIdToken, async (c) =>
    c.json(await signInByIdToken(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
  )
  .post("/signup/idtoken", ...signInWithIdToken, async (c) =>
    c.json(await signInByIdToken(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
  )
  .post("/link/idtoken", requireAuth, requireElevation(), jsonBody(idTokenBody), async (c) => {
    const { provider, idToken, nonce } = c.req.valid("json");
    const profile = await profileFromIdToken(c.var.deps, provider, idToken, nonce);
    await linkIdentity(c.var.deps, c.var.auth!.sub, provider, profile.id);
    return c.json("OK");
  })
  .get("/signin/provider/:provider", startRoute)
  // The client's sign-up variant (client.md §15): the same flow; a new user is made if there is none.
  .get("/signup/provider/:provider", startRoute)
  .get("/signin/provider/:provider/callback", async (c) => {
    const location = await finishProviderSignIn(
      c.var.deps,
      c.req.param("provider"),
      await callbackParams("GET", c.req.url, () => bodyText(c)),
      await browserBinding(c, "provider-flow"),
      c.req.header("user-agent"),
    );
    return c.redirect(location, 302);
  })
  /**
   * Apple's `response_mode=form_post` callback is a cross-site POST, which carries no SameSite=Lax cookie, so it cannot
   * show which browser it is. It finishes nothing: a 303 sends the same parameters to the GET callback, a top-level
   * GET navigation that does carry the binding cookie (RFC 6265bis §5.6.7.1). Apple's code is useless without this
   * service's client secret, so its passage through the address bar adds no exposure.
   */
  .post("/signin/provider/:provider/callback", async (c) => {
    const params = await callbackParams("POST", c.req.url, () => bodyText(c));
    const asGet = new URL(
      `${c.var.config.AUTH_SERVER_URL}/signin/provider/${c.req.param("provider")}/callback`,
    );
    for (const name of ["code", "state", "user", "error", "error_description"]) {
      if (params[name] !== undefined) asGet.searchParams.set(name, params[name]);
    }
    return c.redirect(asGet.toString(), 303);
  })
  .get("/signin/provider/:provider/callback/tokens", requireAuth, async (c) =>
    c.json(await takeProviderTokens(c.var.deps, c.var.auth!.sub, c.req.param("provider"))),
  )
  .post(
    "/token/provider/:provider",
    requireAuth,
    jsonBody(z.object({ refreshToken: z.string().min(1).max(4096) })),
    async (c) => {
      const provider = c.req.param("provider");
      const settings = isProviderName(provider) ? c.var.config.providers.enabled[provider] : undefined;
      if (!settings) throw new AppError("disabled-endpoint", `the provider ${provider} is not enabled`);
      try {
        const tokens = await refreshAtProvider(c.var.deps, settings, c.req.valid("json").refreshToken);
        const expiresIn = tokens.expiresIn ?? 0;
        return c.json({
          accessToken: tokens.accessToken,
          expiresIn,
          expiresAt: new Date(c.var.deps.now() + expiresIn * 1000).toISOString(),
          refreshToken: tokens.refreshToken ?? c.req.valid("json").refreshToken,
        });
      } catch (error) {
        if (error instanceof ProviderStepError)
          throw new AppError("oauth-provider-error", undefined, error.detail);
        throw error;
      }
    },
  );
