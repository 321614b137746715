import { Hono } from "hono";
import { signInScope } from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import { rateLimit } from "../../../rate-limits/middleware";
import { GoTrueError, toGoTrueError } from "./errors";
import { verifyMailedToken } from "./imported-links";
import { allowedRedirect, asOtpRefusal, isMailType } from "./mail-links";
import { signGoTrueToken } from "./tokens";
import { goTrueSession } from "./wire";

/**
 * The link of this face's mails (`GET /verify?token=…&type=…&redirect_to=…`, contract supabase.md §2), reached by a
 * browser without a key, as GoTrue's gateway leaves it open. As GoTrue: a 303 to `redirect_to` (admitted by the
 * allow-list, else the default target) with the session in the fragment (`access_token`, `refresh_token`, …,
 * `type`), where auth-js's `detectSessionInUrl` reads it (`type=recovery` fires `PASSWORD_RECOVERY`); under PKCE
 * (the mail was asked for with a `code_challenge`) `?code=`, which only the holder of the verifier turns into a
 * session (`POST /token?grant_type=pkce`, the core's link exchange codes). A refusal travels in the fragment too:
 * `error`, `error_code`, `error_description`.
 */

/** GoTrue's `error` of a refusal's status (its `oauthErrorMap`). */
const OAUTH_ERROR: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized_client",
  403: "access_denied",
  500: "server_error",
  503: "temporarily_unavailable",
};

const fragment = (target: string, params: Record<string, string>) =>
  `${target.split("#")[0]}#${new URLSearchParams({ ...params, sb: "" }).toString()}`;

export const goTrueVerifyLinkRoutes = new Hono<AppEnv>().get(
  "/verify",
  rateLimit("BRUTE_FORCE"),
  async (c) => {
    const { config, deps } = c.var;
    const token = c.req.query("token") ?? "";
    const type = c.req.query("type") ?? "";
    if (!type) throw new GoTrueError(400, "validation_failed", "Verify requires a verification type");
    if (!token) throw new GoTrueError(400, "validation_failed", "Verify requires a token or a token hash");
    const target = allowedRedirect(config, c.req.query("redirect_to")) ?? config.urls.defaultRedirect;
    try {
      if (!isMailType(type)) throw new GoTrueError(400, "validation_failed", "Unsupported verification type");
      // A user with a second factor lands with an aal1 session, which the app steps up (mfa-routes.ts).
      const scope = signInScope(c, "email-link", { minter: signGoTrueToken, secondFactorLater: true });
      const verified = await verifyMailedToken(scope, token, type);
      if ("code" in verified) {
        const url = new URL(target);
        url.searchParams.set("code", verified.code);
        return c.redirect(url.toString(), 303);
      }
      if (!("session" in verified)) {
        throw new GoTrueError(400, "mfa_challenge_needed", "This account signs in with a second factor");
      }
      const session = goTrueSession(verified.session, deps.now());
      return c.redirect(
        fragment(target, {
          access_token: session.access_token,
          token_type: session.token_type,
          expires_in: String(session.expires_in),
          expires_at: String(session.expires_at),
          refresh_token: session.refresh_token,
          type,
        }),
        303,
      );
    } catch (caught) {
      const error = toGoTrueError(asOtpRefusal(caught));
      if (error.status >= 500) throw caught;
      return c.redirect(
        fragment(target, {
          ...(OAUTH_ERROR[error.status] ? { error: OAUTH_ERROR[error.status]! } : {}),
          error_code: error.code,
          error_description: error.message,
        }),
        303,
      );
    }
  },
);
