import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { optionalAuth } from "../../http/auth";
import { refreshTokenField } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { verifyAccessToken } from "../../lib/jwt";
import { rateLimit } from "../../rate-limits/middleware";
import { redeemExchangeCode } from "./exchange-codes";
import { refreshSession } from "./refresh";
import { revokeAllSessions, revokeByRefreshToken } from "./revocation";

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
const codeVerifierField = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{43,128}$/, "must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~");

/** refreshToken, tokenExchange (PKCE links), signOut, verifyToken (contract §3.3, client.md §15). */
export const tokenRoutes = new Hono<AppEnv>()
  .post("/token", rateLimit("REFRESH"), jsonBody(z.object({ refreshToken: refreshTokenField })), async (c) =>
    // A bare Session, not wrapped: the client stores it because it has accessToken, refreshToken and user.
    c.json(await refreshSession(c.var.deps, c.req.valid("json").refreshToken)),
  )
  .post(
    "/token/exchange",
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ code: z.string().min(1).max(100), codeVerifier: codeVerifierField })),
    async (c) =>
      c.json(await redeemExchangeCode(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
  )
  .post(
    "/signout",
    optionalAuth,
    jsonBody(z.object({ refreshToken: refreshTokenField.optional(), all: z.boolean().optional() })),
    async (c) => {
      const { refreshToken, all } = c.req.valid("json");
      if (all) {
        const auth = c.var.auth;
        if (!auth)
          throw new AppError("unauthorized", "signing out of all sessions needs a valid access token");
        await revokeAllSessions(c.var.deps, auth.sub);
      } else if (refreshToken) {
        await revokeByRefreshToken(c.var.deps, refreshToken);
      }
      return c.json("OK");
    },
  )
  .post("/token/verify", jsonBody(z.object({ token: z.string().max(8192).optional() })), async (c) => {
    const fromBody = c.req.valid("json").token;
    const fromHeader = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const token = fromBody ?? fromHeader;
    if (!token || !(await verifyAccessToken(c.var.config, token))) throw new AppError("unauthorized");
    return c.json("OK");
  });
