import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { operation } from "../../http/documented";
import { emailField, passwordField } from "../../http/fields";
import { turnstile } from "../../http/turnstile";
import { jsonBody } from "../../http/validation";
import { rateLimitBeside } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signInEmailPassword } from "./sign-in";

const emailPasswordBody = z.object({ email: emailField, password: passwordField });

export const signInRoutes = new Hono<AppEnv>().post(
  "/signin/email-password",
  operation({
    summary: "Sign in with email and password",
    description:
      "Answers a session; with TOTP active, `session` is null and `mfa.ticket` goes to `POST /signin/mfa/totp`. " +
      "An unknown email, a wrong password and a blocked address all answer the same 401 `invalid-email-password` in " +
      "the same time. An unverified address answers 401 `unverified-user` when verification is required; a disabled " +
      "user 401 `disabled-user`. Counted per address and per email (`BRUTE_FORCE`). Ten wrong passwords within an " +
      "hour lock the account's password (also for an email with no account): 429 `account-locked` with " +
      "`Retry-After`, a right password included, and the owner is mailed a link that unlocks.",
    answers: { 200: { description: "A session, or an MFA ticket.", schema: sessionPayloadSchema } },
  }),
  rateLimitBeside("BRUTE_FORCE", "email"),
  jsonBody(emailPasswordBody),
  turnstile("signin"),
  async (c) => c.json(await signInEmailPassword(signInScope(c, "email-password"), c.req.valid("json"))),
);
