import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { signOutAuth } from "../../http/auth";
import { OK_ANSWER, operation } from "../../http/documented";
import { refreshTokenField } from "../../http/fields";
import { importedSystemOf, importedTokenRefusal, verifyUserAccessToken } from "../../http/imported-tokens";
import { jsonBody } from "../../http/validation";
import { codeVerifierSchema } from "../../lib/pkce";
import { rateLimit } from "../../rate-limits/middleware";
import { redeemExchangeCode } from "../links";
import { sessionPayloadSchema, sessionSchema } from "../new-sessions";
import { revokeAllSessions, revokeByRefreshToken } from "../revocation";
import { signInScope } from "../sign-in";
import { renewSession } from "./renew";

/** refreshToken, tokenExchange (PKCE links), signOut, verifyToken (contract §3.3, client.md §15). */
export const tokenRoutes = new Hono<AppEnv>()
  .post(
    "/token",
    operation({
      summary: "Refresh the session",
      description:
        "Exchanges a refresh token for a new session (a bare Session, not wrapped). Refresh tokens are single use " +
        "and rotate: the same token again within a few seconds (two tabs) answers the same successor; after that it " +
        "is a replay and ends the session. Unknown, used or expired: 401 `invalid-refresh-token`. " +
        "`orgId` switches the session into an organization (contract organizations.md §1): the new access token " +
        "carries `org_id` and, in the Hasura claims, `x-hasura-org-id` and `x-hasura-org-role`; `null` switches " +
        "out; absent keeps the session's. An org the user is no active member of: 403 `not-org-member`, the " +
        "token unspent. A session whose membership ended (removed, deactivated, org deleted) refreshes without it.",
      answers: { 200: { description: "The new session.", schema: sessionSchema } },
    }),
    rateLimit("REFRESH"),
    jsonBody(
      z.object({
        refreshToken: refreshTokenField,
        orgId: z
          .string()
          .min(1)
          .max(100)
          .nullable()
          .optional()
          .describe("Switch into this organization; `null` out of any; absent: keep the session's"),
      }),
    ),
    async (c) => {
      const { refreshToken, orgId } = c.req.valid("json");
      const deps = c.var.deps;
      const grace = deps.config.tokens.reuseInterval * 1000;
      // A bare Session, not wrapped: the client stores it because it has accessToken, refreshToken and user.
      return c.json(
        await renewSession(deps, refreshToken, grace, orgId, { dpopJkt: c.var.sessionJkt ?? null }),
      );
    },
  )
  .post(
    "/token/exchange",
    operation({
      summary: "Exchange a PKCE link's code",
      description:
        "A mailed link asked for with a `codeChallenge` lands with `code` instead of a refresh token; the app that " +
        "asked exchanges it with its `codeVerifier`, so a link opened elsewhere signs nobody in. Single use, five " +
        "minutes: 400 `invalid-request` otherwise.",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ code: z.string().min(1).max(100), codeVerifier: codeVerifierSchema })),
    async (c) => {
      // Named before the take: its refusal of a disabled user is this method's `signin.failure` (src/http/refusal.ts).
      const scope = signInScope(c, "pkce-link");
      const { answer } = await redeemExchangeCode(c.var.deps, c.req.valid("json"), {
        scopeFor: () => scope,
        answer: async (result) => result,
      });
      return c.json(answer);
    },
  )
  .post(
    "/signout",
    operation({
      summary: "Sign out",
      description:
        "Ends the session of `refreshToken`, or with `all: true` and a valid access token every session of the " +
        'user. An unknown token still answers `"OK"`.',
      security: "optional-bearer",
      answers: { 200: OK_ANSWER("Signed out.") },
    }),
    signOutAuth,
    jsonBody(z.object({ refreshToken: refreshTokenField.optional(), all: z.boolean().optional() })),
    async (c) => {
      const { refreshToken, all } = c.req.valid("json");
      if (all) {
        const auth = c.var.auth;
        if (!auth)
          throw new AppError("unauthorized", "signing out of all sessions needs a valid access token");
        if (importedSystemOf(auth)) throw importedTokenRefusal();
        await revokeAllSessions(c.var.deps, auth.sub);
      } else if (refreshToken) {
        await revokeByRefreshToken(c.var.deps, refreshToken);
      }
      return c.json("OK");
    },
  )
  .post(
    "/token/verify",
    operation({
      summary: "Check an access token",
      description:
        '`"OK"` when `token` (or, without one, the bearer) is a valid access token of this service; 401 ' +
        "`unauthorized` otherwise.",
      security: "optional-bearer",
      answers: { 200: OK_ANSWER("Valid.") },
    }),
    jsonBody(z.object({ token: z.string().max(8192).optional() })),
    async (c) => {
      const fromBody = c.req.valid("json").token;
      const fromHeader = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
      const token = fromBody ?? fromHeader;
      if (!token || !(await verifyUserAccessToken(c.var.deps, token))) throw new AppError("unauthorized");
      return c.json("OK");
    },
  );
