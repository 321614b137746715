import { Hono } from "hono";
import { z } from "zod";
import { AppError, concealIfConfigured } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { operation, REDIRECT_ANSWER } from "../../http/documented";
import { isOwnSignedRedirect, isRedirectAllowedBy, withQuery } from "../../lib/redirect";
import { rateLimit } from "../../rate-limits/middleware";
import { signInScope } from "../sign-in";
import { verifyTicket } from "./verify-ticket";

/**
 * verifyTicketURL (contract §8). Browser-facing, so every outcome is a 302: errors travel in the redirect's query
 * as `error` and `errorDescription` (contract §1, "Redirect errors").
 */
export const verifyRoutes = new Hono<AppEnv>().get(
  "/verify",
  operation({
    summary: "Follow a mailed link",
    description:
      "Where every mailed link points: checks the ticket (single use) and sends the browser to `redirectTo` with " +
      "`refreshToken` and `type` (or `code` for a PKCE link, `mfaTicket` when TOTP is on), or with `error` and " +
      "`errorDescription`. A `redirectTo` outside the allow-list goes to the default target with " +
      "`redirectTo-not-allowed`.",
    request: {
      target: "query",
      schema: z.object({ ticket: z.string(), redirectTo: z.string(), type: z.string().optional() }),
    },
    answers: { 302: REDIRECT_ANSWER("To redirectTo, with the outcome in the query.") },
  }),
  rateLimit("BRUTE_FORCE"),
  async (c) => {
    const { config } = c.var;
    const ticket = c.req.query("ticket") ?? "";
    const redirectTo = c.req.query("redirectTo") ?? "";
    // A target the service minted for its own page (the OAuth2 page's magic link) is admitted by its MAC.
    if (!isRedirectAllowedBy(config, redirectTo) && !(await isOwnSignedRedirect(config, redirectTo))) {
      const error = new AppError("redirectTo-not-allowed");
      return c.redirect(
        withQuery(config.urls.defaultRedirect, { error: error.code, errorDescription: error.message }),
        302,
      );
    }
    try {
      const verified = await verifyTicket(signInScope(c, "email-link"), ticket);
      const credential: Record<string, string> =
        "code" in verified
          ? { code: verified.code }
          : "mfaTicket" in verified
            ? { mfaTicket: verified.mfaTicket }
            : { refreshToken: verified.session.refreshToken };
      return c.redirect(withQuery(redirectTo, { ...credential, type: verified.type }), 302);
    } catch (caught) {
      if (!(caught instanceof AppError)) throw caught;
      const error = concealIfConfigured(caught, config.concealErrors);
      return c.redirect(withQuery(redirectTo, { error: error.code, errorDescription: error.message }), 302);
    }
  },
);
