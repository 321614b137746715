import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { requireAuth } from "../middleware/auth";
import { jsonBody } from "../middleware/validate";
import { ProviderStepError, refreshAtProvider } from "./client";
import { finishProviderSignIn, startProviderSignIn, takeProviderTokens } from "./flow";
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

/** signInProviderURL, its callback, getProviderTokens and refreshProviderToken (contract §3.2, §7). */
export const providerRoutes = new Hono<AppEnv>()
  .get("/signin/provider/:provider", async (c) =>
    c.redirect(await startProviderSignIn(c.var.deps, c.req.param("provider"), c.req.query()), 302),
  )
  // The client's sign-up variant (client.md §15): the same flow; a new user is made if there is none.
  .get("/signup/provider/:provider", async (c) =>
    c.redirect(await startProviderSignIn(c.var.deps, c.req.param("provider"), c.req.query()), 302),
  )
  .on(["GET", "POST"], "/signin/provider/:provider/callback", async (c) => {
    const params = await callbackParams(c.req.method, c.req.url, () => c.req.text());
    const location = await finishProviderSignIn(
      c.var.deps,
      c.req.param("provider"),
      params,
      c.req.header("user-agent"),
    );
    // After Apple's cross-site form post, a 303 turns the browser's next request into a GET.
    return c.redirect(location, c.req.method === "POST" ? 303 : 302);
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
