import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { codeChallengeField, emailField } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { signUpOptionsSchema } from "../accounts/sign-up-options";
import { signInPasswordlessEmail } from "./email-flows";
import { signInOtpEmail, verifyOtpEmail } from "./email-otp";

const emailWithOptions = z.object({
  email: emailField,
  options: signUpOptionsSchema.optional(),
  codeChallenge: codeChallengeField,
});

/**
 * signInPasswordlessEmail, signInOTPEmail, verifySignInOTPEmail (contract §3.2), and the client's sign-up variants
 * (client.md §15), which refuse an address that already has an account.
 */
export const passwordlessRoutes = new Hono<AppEnv>()
  .post("/signin/passwordless/email", rateLimit("EMAIL", "email"), jsonBody(emailWithOptions), async (c) => {
    await signInPasswordlessEmail(c.var.deps, c.req.valid("json"), "sign-in");
    return c.json("OK");
  })
  .post(
    "/signup/passwordless/email",
    rateLimit("SIGNUPS"),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    async (c) => {
      await signInPasswordlessEmail(c.var.deps, c.req.valid("json"), "sign-up");
      return c.json("OK");
    },
  )
  .post("/signin/otp/email", rateLimit("EMAIL", "email"), jsonBody(emailWithOptions), async (c) => {
    await signInOtpEmail(c.var.deps, c.req.valid("json"), "sign-in");
    return c.json("OK");
  })
  .post(
    "/signup/otp/email",
    rateLimit("SIGNUPS"),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    async (c) => {
      await signInOtpEmail(c.var.deps, c.req.valid("json"), "sign-up");
      return c.json("OK");
    },
  )
  .post(
    "/signin/otp/email/verify",
    rateLimit("BRUTE_FORCE", "email"),
    jsonBody(z.object({ email: emailField, otp: z.string().min(1).max(12) })),
    async (c) => {
      const { email, otp } = c.req.valid("json");
      return c.json(await verifyOtpEmail(c.var.deps, email, otp, c.req.header("user-agent")));
    },
  );
