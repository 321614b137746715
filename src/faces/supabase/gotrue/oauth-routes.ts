import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  liveSession,
  type Method,
  type ProviderTokens,
  redeemExchangeCode,
  type Session,
  type SignInResult,
  signInScope,
} from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { bindBrowser, browserBinding } from "../../../http/browser-binding";
import { withQuery } from "../../../lib/redirect";
import {
  followAnswer,
  goOrAsk,
  REQUEST_LIFETIME_MS,
  startProviderSignIn,
  takeProviderTokens,
} from "../../../providers";
import { GoTrueError } from "./errors";
import { sessionWithFactors } from "./mfa-wire";
import {
  appTarget,
  type Binding,
  browserChallenge,
  browserVerifier,
  coreRedirectError,
  type FlowType,
  faceCallback,
  openTicket,
  pkceChallenge,
  redirectErrorOf,
  scopesOf,
  sealTicket,
  withRedirectError,
} from "./oauth-flow";
import { bodyOf, signedIn } from "./request";
import { startSsoFromTicket } from "./sso-routes";
import { goTrueIssuer, signGoTrueToken } from "./tokens";
import { goTrueSession } from "./wire";

/**
 * GoTrue's provider sign-in and linking (contract supabase.md §2: `signInWithOAuth`, `linkIdentity`,
 * `exchangeCodeForSession`) over the core's redirect flow (src/providers/flow.ts), which keeps its state, nonce, PKCE
 * with the provider and browser binding. The provider's redirect URI stays the Nhost one
 * (`{AUTH_SERVER_URL}/signin/provider/{p}/callback`), so one provider app serves both faces; the core's callback sends
 * the browser on to this face's `/callback` with a one-time code (src/auth/links/exchange-codes.ts), which ends at the
 * app's `redirect_to`: `?code=` under PKCE, the session in the fragment otherwise.
 */

const authorizeQuery = z.object({
  provider: z.string().max(64).optional(),
  redirect_to: z.string().max(2048).optional(),
  scopes: z.string().max(1024).optional(),
  code_challenge: z.string().max(256).optional(),
  code_challenge_method: z.string().max(16).optional(),
  skip_http_redirect: z.string().max(8).optional(),
  link_ticket: z.string().max(1024).optional(),
  sso_ticket: z.string().max(4096).optional(),
});

function queryOf(c: Context<AppEnv>) {
  const parsed = authorizeQuery.safeParse(c.req.query());
  if (!parsed.success) throw new GoTrueError(400, "validation_failed", "Invalid query parameters");
  return parsed.data;
}

function enabledProvider(c: Context<AppEnv>, provider: string | undefined): string {
  if (!provider) throw new GoTrueError(400, "validation_failed", "Unsupported provider: missing provider");
  // A custom provider (`AUTH_CUSTOM_PROVIDERS`) is enabled as a built-in one is.
  if (!Object.hasOwn(c.var.config.providers.enabled, provider)) {
    throw new GoTrueError(
      400,
      "validation_failed",
      `Unsupported provider: provider ${provider} is not enabled`,
    );
  }
  return provider;
}

/**
 * `/authorize` for a browser: bound to it by the core's cookie, the core's flow starts with the face's way back. With
 * a link ticket (below) the identity is linked to the ticket's user, whose session must still be alive, and the core
 * asks the person first (src/providers/ask-first.ts: link CSRF), its form posting to `/authorize/link`.
 */
async function startFromBrowser(c: Context<AppEnv>): Promise<Response> {
  const query = queryOf(c);
  const { config, deps } = c.var;
  if (query.sso_ticket !== undefined) return c.redirect(await startSsoFromTicket(c, query.sso_ticket), 302);
  const provider = enabledProvider(c, query.provider);
  const challenge = pkceChallenge(query.code_challenge, query.code_challenge_method);
  const scopes = scopesOf(query.scopes);
  let linkTo: string | undefined;
  if (query.link_ticket !== undefined) {
    const ticket = await openTicket(config, query.link_ticket, "gotrue-link", deps.now());
    const live = await liveSession(deps, ticket.sid);
    if (!live || live.id !== ticket.sub) {
      throw new GoTrueError(403, "session_not_found", "Session from session_id claim in JWT does not exist");
    }
    linkTo = ticket.sub;
  }
  const browserHash = await bindBrowser(c, "provider-flow", REQUEST_LIFETIME_MS / 1000);
  const flow: FlowType = challenge ? "pkce" : "implicit";
  const target = appTarget(config, query.redirect_to);
  const started = await startProviderSignIn(deps, provider, {}, browserHash, linkTo, {
    returnTo: faceCallback(config, target, flow, "provider-flow"),
    codeChallenge: challenge ?? (await browserChallenge(config, browserHash)),
    scopes,
  });
  // The face's callback, then the app: the form's redirect chain ends at `target`.
  return goOrAsk(
    c,
    provider,
    { ...started, returnTo: target },
    browserHash,
    `${goTrueIssuer(config)}/authorize/link`,
  );
}

/**
 * This face's part of a code's redemption (the core's `redeemExchangeCode`): GoTrue's tokens and its rule
 * (mfa-routes.ts) that a user with a second factor gets an aal1 session, which mfa.verify steps up; a provider's code
 * brings the provider's tokens. `unnamed` records a code that names no method (a mailed link's).
 */
function goTrueRedemption(c: Context<AppEnv>, unnamed: Method | null) {
  return {
    scopeFor: (method: Method | undefined) =>
      signInScope(c, method ?? unnamed, { minter: signGoTrueToken, secondFactorLater: true }),
    providerTokens: takeProviderTokens,
  };
}

/** The session a code's sign-in started; none (a second factor asked for first) is GoTrue's `mfa_challenge_needed`. */
function startedSession({ session }: SignInResult): Session {
  if (!session)
    throw new GoTrueError(400, "mfa_challenge_needed", "This account signs in with a second factor");
  return session;
}

/** A provider token's value, when the provider gave one. */
function tokenOf(tokens: ProviderTokens | undefined, name: "accessToken" | "refreshToken"): string {
  const value = tokens?.[name];
  return typeof value === "string" ? value : "";
}

/** The implicit flow's end: the code, with this browser's verifier, becomes the session in the fragment. */
async function implicitSession(
  c: Context<AppEnv>,
  code: string,
  target: string,
  binding: Binding,
): Promise<string> {
  const { deps } = c.var;
  const browserHash = await browserBinding(c, binding);
  if (!browserHash) throw new AppError("invalid-state");
  const codeVerifier = await browserVerifier(c.var.config, browserHash);
  const { answer: body, providerTokens } = await redeemExchangeCode(
    deps,
    { code, codeVerifier },
    {
      ...goTrueRedemption(c, null),
      // Another browser's code (login CSRF), a replay, or an expired one: the state of this flow is not found.
      refusal: () => new AppError("invalid-state"),
      answer: async (result) => goTrueSession(startedSession(result), deps.now()),
    },
  );
  const providerRefreshToken = tokenOf(providerTokens, "refreshToken");
  const fragment = new URLSearchParams({
    access_token: body.access_token,
    token_type: body.token_type,
    expires_in: String(body.expires_in),
    expires_at: String(body.expires_at),
    refresh_token: body.refresh_token,
    provider_token: tokenOf(providerTokens, "accessToken"),
    ...(providerRefreshToken ? { provider_refresh_token: providerRefreshToken } : {}),
    sb: "",
  });
  return `${target.split("#")[0]}#${fragment}`;
}

const pkceGrantBody = z.object({
  auth_code: z.string().max(512).nullish(),
  code_verifier: z.string().max(256).nullish(),
});

/**
 * `exchangeCodeForSession`: `POST /token?grant_type=pkce {auth_code, code_verifier}`, for a provider's code and a
 * mailed link's alike (one code store, the core's exchange codes). The code is taken before the verifier is compared
 * (in constant time): a wrong verifier burns it, where GoTrue would let it be tried again.
 */
export async function pkceGrant(c: Context<AppEnv>): Promise<Response> {
  const body = await bodyOf(c, pkceGrantBody);
  if (!body.auth_code || !body.code_verifier) {
    throw new GoTrueError(
      400,
      "validation_failed",
      "invalid request: both auth code and code verifier should be non-empty",
    );
  }
  const { deps } = c.var;
  const { answer: session, providerTokens } = await redeemExchangeCode(
    deps,
    { code: body.auth_code, codeVerifier: body.code_verifier },
    {
      // A mailed link's code is recorded as the Nhost API records it; a provider's names its provider.
      ...goTrueRedemption(c, "pkce-link"),
      refusal: (reason) =>
        reason === "bad-verifier"
          ? new GoTrueError(
              400,
              "bad_code_verifier",
              "code challenge does not match previously saved code verifier",
            )
          : new GoTrueError(404, "flow_state_not_found", "invalid flow state, no valid flow state found"),
      answer: async (result) => sessionWithFactors(deps, startedSession(result)),
    },
  );
  const providerToken = tokenOf(providerTokens, "accessToken");
  const providerRefreshToken = tokenOf(providerTokens, "refreshToken");
  return c.json({
    ...session,
    ...(providerToken ? { provider_token: providerToken } : {}),
    ...(providerRefreshToken ? { provider_refresh_token: providerRefreshToken } : {}),
  });
}

export const goTrueOAuthRoutes = new Hono<AppEnv>()
  // signInWithOAuth (auth-js builds this URL; the browser opens it). A bad parameter is GoTrue's JSON 400: there is
  // no safe place to send the browser yet.
  .get("/authorize", startFromBrowser)
  // linkIdentity's question, answered (the page of `/authorize` with a link ticket): on to the provider.
  .post("/authorize/link", followAnswer)
  .get("/callback", async (c) => {
    const params = new URL(c.req.url).searchParams;
    const target = appTarget(c.var.config, params.get("redirect_to"));
    const error = params.get("error");
    if (error)
      return c.redirect(
        withRedirectError(target, coreRedirectError(error, params.get("errorDescription"))),
        302,
      );
    const code = params.get("code");
    try {
      if (!code || code.length > 512)
        throw new GoTrueError(400, "bad_oauth_callback", "OAuth callback with missing authorization code");
      // PKCE: the code goes to the app, whose verifier alone redeems it (GoTrue's `?code=`).
      if (params.get("flow") === "pkce") return c.redirect(withQuery(target, { code }), 302);
      const binding = params.get("via") === "sso" ? "sso-flow" : "provider-flow";
      return c.redirect(await implicitSession(c, code, target, binding), 302);
    } catch (caught) {
      if (caught instanceof GoTrueError || (caught instanceof AppError && caught.status < 500)) {
        return c.redirect(withRedirectError(target, redirectErrorOf(caught)), 302);
      }
      throw caught;
    }
  })
  // linkIdentity: asked with the user's token (skip_http_redirect=true: JSON); the URL is this face's `/authorize`
  // with a link ticket, so that the browser going to the provider is bound to the flow (oauth-flow.ts).
  .get("/user/identities/authorize", async (c) => {
    const { claims } = await signedIn(c);
    const query = queryOf(c);
    enabledProvider(c, query.provider);
    pkceChallenge(query.code_challenge, query.code_challenge_method);
    scopesOf(query.scopes);
    const url = new URL(`${goTrueIssuer(c.var.config)}/authorize`);
    for (const name of [
      "provider",
      "redirect_to",
      "scopes",
      "code_challenge",
      "code_challenge_method",
    ] as const) {
      const value = query[name];
      if (value !== undefined) url.searchParams.set(name, value);
    }
    url.searchParams.set(
      "link_ticket",
      await sealTicket(
        c.var.config,
        { purpose: "gotrue-link", sub: claims.sub, sid: claims.session_id },
        c.var.deps.now(),
      ),
    );
    if (query.skip_http_redirect === "true") return c.json({ url: url.toString() });
    return c.redirect(url.toString(), 302);
  });
