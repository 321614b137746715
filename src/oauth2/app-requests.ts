import { resolveRedirectTo, type SignInScope, startSession } from "../auth";
import type { Config } from "../config";
import type { UserRow } from "../db/schema";
import { matchesAllowedUrl, withQuery } from "../lib/redirect";
import { claimJtiOnce } from "../replay/jti-ledger";
import { newRequestId, PENDING_REQUEST_TTL_SECONDS, type PendingRequest } from "./pending-requests";

/**
 * The hosted pages of a first-party app (contract §13): `GET {prefix}/signin?redirectTo=…` (and `/signup`, `/reset`)
 * becomes a pending request of the built-in page with no client, and ends like a provider sign-in: a 303 to the
 * allowed `redirectTo` with a NEW session's `refreshToken`, which the app (nhost-js) exchanges at `POST /token`.
 *
 * Threats and answers (docs/protection.md, "Hosted pages"):
 * - Open redirect: `redirectTo` passes the API's own check (`resolveRedirectTo`, the allow-list of contract §8) when
 *   the request is made and again when it completes; a refresh token goes to nothing else.
 * - Replay of a completion (a second tab, the back button, a replayed request id): the request id is claimed once in
 *   the JTI ledger (a Durable Object: check and record in one call) before the session is made; KV, which holds the
 *   request, is not atomic.
 * - Session fixation: the app's session is always made here, never taken from the request; the page's own session
 *   (its cookie) is separate and stays the page's.
 * - A stray session: the way back to this service's own account center gets no token (the browser is signed in to
 *   the pages by their cookie, which is all the account center reads).
 */

/** This service's account center, always a way back from the hosted pages (and never one that gets a token). */
export const accountCenterUrl = (config: Config) => config.urls.auth("/account");

export const isAccountCenter = (config: Config, target: string) =>
  matchesAllowedUrl(target, accountCenterUrl(config));

/**
 * Where the app asks to come back to: the account center, or a URL the API's `redirectTo` check allows (none given:
 * the deployment's default, as for a provider sign-in). Throws `redirectTo-not-allowed`.
 */
export function appTarget(config: Config, redirectTo: string | undefined): string {
  if (redirectTo !== undefined && isAccountCenter(config, redirectTo)) return redirectTo;
  return resolveRedirectTo(config, redirectTo);
}

/** A page request for the app: no client and no redirect URI; `prompt=login` asks for a sign-in made for it. */
export function appRequest(
  now: number,
  redirectTo: string,
  options: { promptLogin: boolean; uiLocales: string[] },
): PendingRequest {
  return {
    id: newRequestId(),
    clientId: "",
    redirectUri: "",
    scopes: [],
    resources: [],
    prompt: options.promptLogin ? ["login"] : [],
    uiLocales: options.uiLocales,
    app: { redirectTo },
    createdAt: now,
  };
}

/**
 * Where the browser goes back to for `user`, who is signed in to the pages: the account center as it was asked for,
 * or the app's `redirectTo` with a new session's `refreshToken` (the same URL shape as a provider sign-in's:
 * `withQuery` keeps the target's own query and fragment). `request`: the pending request this completes, claimed
 * once (undefined when nothing was pending: `GET /signin` in a browser already signed in); null when it was
 * completed before, and nothing is minted.
 */
export async function finishAppSignIn(
  scope: SignInScope,
  redirectTo: string,
  user: UserRow,
  request?: Pick<PendingRequest, "id" | "createdAt">,
): Promise<string | null> {
  const { deps } = scope;
  if (isAccountCenter(deps.config, redirectTo)) return redirectTo;
  // Checked again: the allow-list may have changed in the ten minutes the request waited.
  const target = resolveRedirectTo(deps.config, redirectTo);
  if (request) {
    const until = request.createdAt + PENDING_REQUEST_TTL_SECONDS * 1000;
    if (!(await claimJtiOnce(deps, "app-request", "hosted-pages", request.id, until))) return null;
  }
  // Recorded as the hosted pages' session, wherever the page completes it.
  const { session } = await startSession(scope, { user, method: "hosted-page" });
  return withQuery(target, { refreshToken: session.refreshToken });
}
