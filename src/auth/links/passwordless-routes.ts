import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { OK_ANSWER, operation } from "../../http/documented";
import { codeChallengeField, emailField } from "../../http/fields";
import { signUpChecks } from "../../http/sign-up-gate";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signUpOptionsSchema } from "../sign-up-options";
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
  .post(
    "/signin/passwordless/email",
    operation({
      summary: "Send a magic link",
      description:
        "Mails a sign-in link (`passwordlessEmail`, one hour); following it signs the user in at `options.redirectTo` " +
        "(`refreshToken` in the query, or `code` with a `codeChallenge`). Creates the user when the address is new " +
        "(unless sign-ups are off). Off unless `AUTH_EMAIL_PASSWORDLESS_ENABLED` (409 `disabled-endpoint`).",
      answers: { 200: OK_ANSWER("The link is on its way.") },
    }),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    signUpChecks("passwordless"),
    async (c) => {
      await signInPasswordlessEmail(signInScope(c, "email-link"), c.req.valid("json"), "sign-in");
      return c.json("OK");
    },
  )
  .post(
    "/signup/passwordless/email",
    operation({
      summary: "Sign up with a magic link",
      description:
        "As `POST /signin/passwordless/email`, for a new address only: an address with an account answers 409 " +
        "`email-already-in-use`.",
      answers: { 200: OK_ANSWER("The link is on its way.") },
    }),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    signUpChecks("passwordless"),
    async (c) => {
      await signInPasswordlessEmail(
        signInScope(c, "email-link", { signUp: true }),
        c.req.valid("json"),
        "sign-up",
      );
      return c.json("OK");
    },
  )
  .post(
    "/signin/otp/email",
    operation({
      summary: "Send a sign-in code by email",
      description:
        "Mails a six-digit code (five minutes) for `POST /signin/otp/email/verify`; creates the user when new. Off " +
        "unless `AUTH_OTP_EMAIL_ENABLED` (409 `disabled-endpoint`).",
      answers: { 200: OK_ANSWER("The code is on its way.") },
    }),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    signUpChecks("passwordless"),
    async (c) => {
      await signInOtpEmail(signInScope(c, "email-otp"), c.req.valid("json"), "sign-in");
      return c.json("OK");
    },
  )
  .post(
    "/signup/otp/email",
    operation({
      summary: "Sign up with a code by email",
      description: "As `POST /signin/otp/email`, for a new address only (409 `email-already-in-use`).",
      answers: { 200: OK_ANSWER("The code is on its way.") },
    }),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithOptions),
    signUpChecks("passwordless"),
    async (c) => {
      await signInOtpEmail(signInScope(c, "email-otp", { signUp: true }), c.req.valid("json"), "sign-up");
      return c.json("OK");
    },
  )
  .post(
    "/signin/otp/email/verify",
    operation({
      summary: "Sign in with the emailed code",
      description:
        "A session (or an MFA ticket) for the right code; marks the address verified. Wrong or expired: 400 " +
        "`invalid-otp`; the fifth wrong try kills the code. Ten wrong codes within an hour lock this way in for the " +
        "address: 429 `account-locked` with `Retry-After`.",
      answers: { 200: { description: "A session, or an MFA ticket.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE", "email"),
    jsonBody(z.object({ email: emailField, otp: z.string().min(1).max(12) })),
    async (c) => {
      const { email, otp } = c.req.valid("json");
      return c.json(await verifyOtpEmail(signInScope(c, "email-otp"), email, otp));
    },
  );
