import { Hono } from "hono";
import { sendReauthenticationCode } from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { rateLimit } from "../../../rate-limits/middleware";
import { GoTrueError } from "./errors";
import { signedIn } from "./request";

/**
 * auth-js's `reauthenticate` (`GET /reauthenticate`, contract supabase.md §2): a code to the signed-in user's own
 * verified address (or number), the `nonce` `updateUser` presents with a sensitive change (user-change.ts).
 */
export const goTrueReauthenticateRoutes = new Hono<AppEnv>().get(
  "/reauthenticate",
  rateLimit("EMAIL"),
  async (c) => {
    const { claims } = await signedIn(c);
    try {
      await sendReauthenticationCode(c.var.deps, claims.sub);
    } catch (error) {
      if (error instanceof AppError && error.code === "unverified-user") {
        throw new GoTrueError(422, "email_not_confirmed", "Please verify your email first.");
      }
      throw error;
    }
    return c.json({});
  },
);
