import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  providerMethod,
  requireElevation,
  sessionPayloadSchema,
  signInScope,
  signUpOptionsSchema,
} from "../auth";
import { AppError, UnavailableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { bindBrowser, browserBinding } from "../http/browser-binding";
import { OK_ANSWER, operation, REDIRECT_ANSWER } from "../http/documented";
import { bodyText, jsonBody } from "../http/validation";
import { rateLimit } from "../rate-limits/middleware";
import { linkIdentity } from "./accounts";
import { answerOperation, followAnswer, goOrAsk } from "./ask-first";
import { ProviderStepError, refreshAtProvider } from "./client";
import { enabledProvider } from "./custom-endpoints";
import { finishProviderSignIn, REQUEST_LIFETIME_MS, startProviderSignIn, takeProviderTokens } from "./flow";
import { signInByIdToken } from "./id-token-sign-in";
import { profileFromIdToken } from "./id-tokens";

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

/**
 * `signInProviderURL`: the browser gets its binding cookie with the redirect to the provider; with `connect` (a link
 * to the token's user), with the question first (ask-first.ts), which its form's post answers (`LINK_ANSWER`).
 */
async function startRoute(c: Context<AppEnv>) {
  const provider = c.req.param("provider") ?? "";
  const browserHash = await bindBrowser(c, "provider-flow", REQUEST_LIFETIME_MS / 1000);
  const started = await startProviderSignIn(c.var.deps, provider, c.req.query(), browserHash);
  return goOrAsk(c, provider, started, browserHash, `${c.var.config.urls.authPath}${LINK_ANSWER}`);
}

/** Where the question of a `connect` start posts its answer. */
const LINK_ANSWER = "/signin/provider/link";

/** signInProviderURL's query (contract §7), as the route reads it (flow.ts); for the document. */
const startQuery = z.object({
  redirectTo: z
    .string()
    .optional()
    .describe("Where the browser lands after (allow-listed); default AUTH_CLIENT_URL"),
  allowedRoles: z.string().optional().describe("Comma-separated, for a new user"),
  defaultRole: z.string().optional(),
  displayName: z.string().optional(),
  locale: z.string().optional(),
  metadata: z.string().optional().describe("A JSON object, for a new user"),
  connect: z
    .string()
    .optional()
    .describe("An access token: link the provider to that user instead of signing in"),
  state: z.string().optional().describe("Returned unchanged to redirectTo"),
  connection: z.string().optional().describe("WorkOS"),
  organization: z.string().optional().describe("WorkOS"),
});

/** The provider's tokens for the app (getProviderTokens, refreshProviderToken). */
const providerTokens = z.object({
  accessToken: z.string(),
  expiresIn: z.number(),
  expiresAt: z.string(),
  refreshToken: z.string().nullable().optional(),
});

const START_DOC = operation({
  summary: "Sign in with a provider",
  description:
    "Sends the browser to the provider (Apple, GitHub, Google, …: docs/providers.md), bound to this browser by a " +
    "cookie; back at the callback, the browser lands on `redirectTo` with `refreshToken` (or `error` and " +
    "`errorDescription`). With `connect`, the provider is linked to that user, once the person said yes on the page " +
    "the start answers (naming the account; a link URL sent to someone else links nothing without them). A provider that is not enabled: the " +
    "redirect carries `error`.",
  request: { target: "query", schema: startQuery },
  answers: {
    200: {
      description:
        "With `connect`: the question whether to link the provider to that account (its form goes on to the provider).",
      media: "html",
    },
    302: REDIRECT_ANSWER("To the provider's authorization page."),
  },
});

const signInWithIdToken = [
  rateLimit("BRUTE_FORCE"),
  jsonBody(idTokenBody.extend({ options: signUpOptionsSchema.optional() })),
] as const;

/**
 * signInProviderURL, its callback, getProviderTokens, refreshProviderToken, and the ID-token operations
 * (contract §3.2, §7).
 */
export const providerRoutes = new Hono<AppEnv>()
  .post(
    "/signin/idtoken",
    operation({
      summary: "Sign in with an Apple or Google ID token",
      description:
        "A native app's ID token (Sign in with Apple, Google Sign-In), verified against the provider's keys with " +
        "the configured audience (409 when the provider is not set up); creates the user if new. `nonce` must be the " +
        "one the app put in the request when the provider requires it.",
      answers: { 200: { description: "A session, or an MFA ticket.", schema: sessionPayloadSchema } },
    }),
    ...signInWithIdToken,
    async (c) => c.json(await signInByIdToken(signInScope(c, "id-token"), c.req.valid("json"))),
  )
  .post(
    "/signup/idtoken",
    operation({
      summary: "Sign up with an Apple or Google ID token",
      description: "As `POST /signin/idtoken` (the client's sign-up name for it).",
      answers: { 200: { description: "A session, or an MFA ticket.", schema: sessionPayloadSchema } },
    }),
    ...signInWithIdToken,
    async (c) =>
      c.json(await signInByIdToken(signInScope(c, "id-token", { signUp: true }), c.req.valid("json"))),
  )
  .post(
    "/link/idtoken",
    operation({
      summary: "Link an Apple or Google identity",
      description:
        "Adds the ID token's identity to the signed-in user. Linked to someone else already: 400 " +
        "`provider-account-already-linked`.",
      security: "elevated",
      answers: { 200: OK_ANSWER("Linked.") },
    }),
    requireAuth,
    requireElevation(),
    jsonBody(idTokenBody),
    async (c) => {
      const { provider, idToken, nonce } = c.req.valid("json");
      const profile = await profileFromIdToken(c.var.deps, provider, idToken, nonce);
      await linkIdentity(c.var.deps, c.var.auth!.sub, provider, profile.id);
      return c.json("OK");
    },
  )
  .post(
    LINK_ANSWER,
    answerOperation(
      "Answer the question of a link",
      "The form of `GET /signin/provider/{provider}?connect=…` (the page asks before the provider is linked to the " +
        "token's account): on to the provider.",
    ),
    followAnswer,
  )
  .get("/signin/provider/:provider", START_DOC, startRoute)
  // The client's sign-up variant (client.md §15): the same flow; a new user is made if there is none.
  .get("/signup/provider/:provider", START_DOC, startRoute)
  .get(
    "/signin/provider/:provider/callback",
    operation({
      summary: "The provider's callback",
      description:
        "Where the provider sends the browser back (`code`, `state`). Ends at the request's `redirectTo` with " +
        "`refreshToken`, or `error` and `errorDescription` (`invalid-state` when the state is unknown, expired, or was " +
        "started in another browser).",
      answers: { 302: REDIRECT_ANSWER("To redirectTo, with the outcome in the query.") },
    }),
    async (c) => {
      const provider = c.req.param("provider");
      const location = await finishProviderSignIn(
        signInScope(c, providerMethod(provider)),
        provider,
        await callbackParams("GET", c.req.url, () => bodyText(c)),
        await browserBinding(c, "provider-flow"),
      );
      return c.redirect(location, 302);
    },
  )
  /**
   * Apple's `response_mode=form_post` callback is a cross-site POST, which carries no SameSite=Lax cookie, so it cannot
   * show which browser it is. It finishes nothing: a 303 sends the same parameters to the GET callback, a top-level
   * GET navigation that does carry the binding cookie (RFC 6265bis §5.6.7.1). Apple's code is useless without this
   * service's client secret, so its passage through the address bar adds no exposure.
   */
  .post(
    "/signin/provider/:provider/callback",
    operation({
      summary: "The provider's callback (form post)",
      description:
        "Apple's `response_mode=form_post`: the same parameters are sent on to the GET callback (303), where the " +
        "browser's binding cookie is readable.",
      answers: { 303: REDIRECT_ANSWER("To the GET callback.") },
    }),
    async (c) => {
      const params = await callbackParams("POST", c.req.url, () => bodyText(c));
      const asGet = new URL(c.var.config.urls.auth(`/signin/provider/${c.req.param("provider")}/callback`));
      for (const name of ["code", "state", "user", "error", "error_description"]) {
        if (params[name] !== undefined) asGet.searchParams.set(name, params[name]);
      }
      return c.redirect(asGet.toString(), 303);
    },
  )
  .get(
    "/signin/provider/:provider/callback/tokens",
    operation({
      summary: "The provider's tokens, once",
      description:
        "The provider's access (and refresh) token from the last sign-in, for the app to call the provider's API. " +
        "Readable once: a second call answers empty values.",
      security: "bearer",
      answers: { 200: { description: "The provider's tokens.", schema: providerTokens } },
    }),
    requireAuth,
    async (c) => c.json(await takeProviderTokens(c.var.deps, c.var.auth!.sub, c.req.param("provider"))),
  )
  .post(
    "/token/provider/:provider",
    operation({
      summary: "Refresh the provider's token",
      description:
        "Asks the provider for a new access token with its refresh token. The provider refusing (`invalid_grant`, " +
        "another 4xx): 400 `oauth-provider-error`; the provider unreachable, slow, or answering 5xx or 429: 503 " +
        "`service-unavailable` with Retry-After, and the refresh token is still worth keeping.",
      security: "bearer",
      answers: { 200: { description: "The provider's new tokens.", schema: providerTokens } },
    }),
    requireAuth,
    jsonBody(z.object({ refreshToken: z.string().min(1).max(4096) })),
    async (c) => {
      const provider = c.req.param("provider");
      const settings = await enabledProvider(c.var.deps, provider);
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
        if (!(error instanceof ProviderStepError)) throw error;
        // An outage is not a refusal: told "refused", the app would drop a refresh token a retry could still use.
        if (error.unavailable)
          throw new UnavailableError(`provider ${provider}: ${error.detail}`.slice(0, 300));
        throw new AppError("oauth-provider-error", undefined, error.detail);
      }
    },
  );
