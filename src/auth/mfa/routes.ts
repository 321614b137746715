import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { verifySignInMfaTotp } from "./mfa-sign-in";
import { changeMfa, createRecoveryCodes, generateTotp } from "./totp-setup";

const codeField = z.string().min(1).max(32);

/** changeUserMfa, verifyChangeUserMfa, verifySignInMfaTotp (contract §3.2, §3.4) and recovery codes (improvement). */
export const mfaRoutes = new Hono<AppEnv>()
  .get("/mfa/totp/generate", requireAuth, async (c) =>
    c.json(await generateTotp(c.var.deps, c.var.auth!.sub)),
  )
  .post(
    "/user/mfa",
    rateLimit("BRUTE_FORCE"),
    requireAuth,
    jsonBody(z.object({ code: codeField, activeMfaType: z.enum(["totp", ""]).optional() })),
    async (c) => {
      await changeMfa(c.var.deps, c.var.auth!.sub, c.req.valid("json"));
      return c.json("OK");
    },
  )
  .post(
    "/mfa/recovery-codes",
    rateLimit("BRUTE_FORCE"),
    requireAuth,
    jsonBody(z.object({ code: codeField })),
    async (c) =>
      c.json({
        recoveryCodes: await createRecoveryCodes(c.var.deps, c.var.auth!.sub, c.req.valid("json").code),
      }),
  )
  .post(
    "/signin/mfa/totp",
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200), otp: codeField })),
    async (c) =>
      c.json(await verifySignInMfaTotp(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
  );
