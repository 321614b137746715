import { Hono } from "hono";
import { signInEmailPassword } from "../../auth/accounts";
import { signInPasswordlessEmail } from "../../auth/links";
import { verifySignInMfaTotp } from "../../auth/mfa";
import { refreshSession } from "../../auth/sessions";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { emailField } from "../../http/fields";
import { countRequest, type RateLimitBucket } from "../../rate-limits/buckets";
import { addressKey } from "../../rate-limits/client-address";
import { startBrowserSession } from "../browser-session";
import type { PendingRequest } from "../pending-requests";
import { isLandingInAskingBrowser, pageLinkTarget } from "./link-binding";
import { linkSent, mfaForm } from "./render";
import { backToPage, type Ctx, formRequest, paths, render, signInPage } from "./respond";

/** How the built-in page signs a person in: a password (then TOTP if active), or a magic link by email. */

function signInMessage(c: Ctx, error: AppError): string {
  if (c.var.config.AUTH_CONCEAL_ERRORS) return "Sign-in failed.";
  switch (error.code) {
    case "invalid-email-password":
      return "Wrong email or password.";
    case "unverified-user":
      return "Verify your email address first: follow the link in the mail we sent you.";
    case "disabled-user":
      return "This account is disabled.";
    case "invalid-totp":
      return "That code is not right.";
    case "invalid-ticket":
    case "invalid-refresh-token":
      return "This sign-in link or code is invalid, used or expired. Start again.";
    default:
      return error.message;
  }
}

/** The page's forms count against the same buckets as the API they stand for (contract §11). */
async function rateLimited(c: Ctx, bucket: RateLimitBucket, email: string): Promise<number | null> {
  const deps = c.var.deps;
  const refusal = await countRequest(
    c.env,
    deps.config.rateLimits,
    bucket,
    {
      address: addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
      account: `id:${email.toLowerCase()}`,
    },
    deps.now(),
  );
  return refusal?.retryAfterSeconds ?? null;
}

const mfaPage = (c: Ctx, requestId: string, ticket: string, error?: string) =>
  render(
    c,
    error ? 401 : 200,
    "Two-step verification",
    mfaForm({ action: paths(c).mfa, requestId, ticket, error }),
  );

/**
 * Where a magic link asked for on the page lands (`/verify` appends `refreshToken` or `mfaTicket`, or `error`): the
 * fresh session becomes the page's cookie, and the address bar is cleaned by the redirect.
 */
export async function landFromEmailLink(c: Ctx, request: PendingRequest, clientName: string) {
  const query = c.req.query();
  if (query.error) {
    return signInPage(c, request, clientName, {
      status: 401,
      error: "This sign-in link is invalid, used or expired.",
    });
  }
  if (!(await isLandingInAskingBrowser(c))) {
    return signInPage(c, request, clientName, {
      status: 400,
      error: "This sign-in link was asked for in another browser. Ask for a new one here, in this browser.",
    });
  }
  if (query.mfaTicket) return mfaPage(c, request.id, query.mfaTicket.slice(0, 100));
  return sessionToCookie(c, request, clientName, query.refreshToken ?? "");
}

/**
 * A session the person just got through the API (a magic link's landing, the passkey script) becomes the page's
 * cookie. Its refresh token is spent without the refresh grace window: the same token presented again (a leaked
 * landing URL in the history, a forwarded link) is a replay, which ends the session rather than signing a second
 * browser in.
 */
async function sessionToCookie(c: Ctx, request: PendingRequest, clientName: string, refreshToken: string) {
  try {
    const session = await refreshSession(c.var.deps, refreshToken.slice(0, 100), 0);
    await startBrowserSession(c, session.user.id, session.refreshTokenId);
    return backToPage(c, request.id);
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return signInPage(c, request, clientName, { status: 401, error: signInMessage(c, error) });
  }
}

export const pageSignInRoutes = new Hono<AppEnv>()
  .post("/sign-in", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const email = (params.get("email") ?? "").slice(0, 254);
    const password = (params.get("password") ?? "").slice(0, 256);
    const again = (status: 400 | 401 | 429, error: string) =>
      signInPage(c, request, client.clientName, { status, email, error });
    const retryAfter = await rateLimited(c, "BRUTE_FORCE", email);
    if (retryAfter !== null) return again(429, `Too many attempts. Try again in ${retryAfter} seconds.`);
    if (!email || !password) return again(400, "Enter your email and password.");
    try {
      const result = await signInEmailPassword(c.var.deps, { email, password }, c.req.header("user-agent"));
      if (result.mfa) return mfaPage(c, request.id, result.mfa.ticket);
      const session = result.session!;
      await startBrowserSession(c, session.user.id, session.refreshTokenId);
      return backToPage(c, request.id);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) return again(401, signInMessage(c, error));
      throw error;
    }
  })
  .post("/mfa", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const ticket = (params.get("ticket") ?? "").slice(0, 100);
    const otp = (params.get("otp") ?? "").replace(/\s/g, "").slice(0, 64);
    try {
      const { session } = await verifySignInMfaTotp(c.var.deps, { ticket, otp }, c.req.header("user-agent"));
      await startBrowserSession(c, session.user.id, session.refreshTokenId);
      return backToPage(c, request.id);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      if (error.code === "invalid-totp") return mfaPage(c, request.id, ticket, signInMessage(c, error));
      return signInPage(c, request, form.client.clientName, { status: 401, error: signInMessage(c, error) });
    }
  })
  .post("/session", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    return sessionToCookie(c, form.request, form.client.clientName, form.params.get("refresh_token") ?? "");
  })
  .post("/email-link", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const email = (params.get("email") ?? "").trim().slice(0, 254);
    const again = (status: 400 | 429, error: string) =>
      signInPage(c, request, client.clientName, { status, email, error });
    if (!c.var.config.AUTH_EMAIL_PASSWORDLESS_ENABLED)
      return again(400, "Sign-in links are switched off here.");
    if (!emailField.safeParse(email).success) return again(400, "Enter a valid email address.");
    const retryAfter = await rateLimited(c, "EMAIL", email);
    if (retryAfter !== null) return again(429, `Too many emails. Try again in ${retryAfter} seconds.`);
    try {
      const ownRedirect = await pageLinkTarget(c, request.id);
      await signInPasswordlessEmail(c.var.deps, { email }, "sign-in", ownRedirect);
    } catch (error) {
      // A refused address (a blocked domain, say) reads like a sent link: the page does not tell who has an
      // account, as the API's "OK" does not.
      if (!(error instanceof AppError) || error.status >= 500) throw error;
    }
    return render(c, 200, "Check your email", linkSent(email));
  });
