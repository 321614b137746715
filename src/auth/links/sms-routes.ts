import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { OK_ANSWER, operation } from "../../http/documented";
import { signUpChecks } from "../../http/sign-up-gate";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signUpOptionsSchema } from "../sign-up-options";
import { signInPasswordlessSms, verifySignInPasswordlessSms } from "./sms-sign-in";

const phoneNumberField = z.string().min(1).max(32);
const codeRequest = z.object({ phoneNumber: phoneNumberField, options: signUpOptionsSchema.optional() });

/**
 * signInPasswordlessSms and verifySignInPasswordlessSms (contract §3.2), and the client's sign-up variant
 * (client.md §15), which refuses a number that already has an account.
 */
export const smsRoutes = new Hono<AppEnv>()
  .post(
    "/signin/passwordless/sms",
    operation({
      summary: "Send a sign-in code by SMS",
      description:
        "Texts a six-digit code (five minutes) for `POST /signin/passwordless/sms/otp`; creates the user when the " +
        "number is new. Off unless `AUTH_SMS_PASSWORDLESS_ENABLED` (409). The provider refusing the number: 400 " +
        "`cannot-send-sms`.",
      answers: { 200: OK_ANSWER("The code is on its way.") },
    }),
    rateLimit("SMS", "phoneNumber"),
    jsonBody(codeRequest),
    signUpChecks("passwordless"),
    async (c) => {
      await signInPasswordlessSms(c.var.deps, c.req.valid("json"), "sign-in");
      return c.json("OK");
    },
  )
  .post(
    "/signup/passwordless/sms",
    operation({
      summary: "Sign up with a code by SMS",
      description:
        "As `POST /signin/passwordless/sms`, for a new number only (409 `phone-number-already-in-use`).",
      answers: { 200: OK_ANSWER("The code is on its way.") },
    }),
    rateLimit("SMS", "phoneNumber"),
    jsonBody(codeRequest),
    signUpChecks("passwordless"),
    async (c) => {
      await signInPasswordlessSms(c.var.deps, c.req.valid("json"), "sign-up");
      return c.json("OK");
    },
  )
  .post(
    "/signin/passwordless/sms/otp",
    operation({
      summary: "Sign in with the texted code",
      description:
        "A session (or an MFA ticket) for the right code; marks the number verified. Wrong or expired: 400 " +
        "`invalid-otp`; the fifth wrong try kills the code. Ten wrong codes within an hour lock this way in for the " +
        "number: 429 `account-locked` with `Retry-After`.",
      answers: { 200: { description: "A session, or an MFA ticket.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE", "phoneNumber"),
    jsonBody(z.object({ phoneNumber: phoneNumberField, otp: z.string().min(1).max(12) })),
    async (c) => c.json(await verifySignInPasswordlessSms(signInScope(c, "sms-otp"), c.req.valid("json"))),
  );
