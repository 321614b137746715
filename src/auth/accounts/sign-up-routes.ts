import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { operation } from "../../http/documented";
import { codeChallengeField, emailField, passwordField } from "../../http/fields";
import { signUpChecks } from "../../http/sign-up-gate";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signUpOptionsSchema } from "../sign-up-options";
import { signUpEmailPassword } from "./sign-up";

const emailPasswordBody = z.object({
  email: emailField,
  password: passwordField,
  options: signUpOptionsSchema.optional(),
  codeChallenge: codeChallengeField,
});

export const signUpRoutes = new Hono<AppEnv>().post(
  "/signup/email-password",
  operation({
    summary: "Sign up with email and password",
    description:
      "Creates a user. When email verification is required (the default) the answer is `{session: null}` and a " +
      "verification link is mailed (its target: `options.redirectTo`, else `AUTH_CLIENT_URL`); otherwise a " +
      "session. Refusals, in this order: 403 `signup-disabled`, 401 `invalid-email-password` (a blocked or " +
      "not-allowed address domain), 400 " +
      "`password-too-short`, 400 `password-in-hibp-database`, 400 `redirectTo-not-allowed` or a role error, 409 " +
      "`email-already-in-use`. `codeChallenge` (PKCE S256) makes the mailed link return a `code` for " +
      "`POST /token/exchange` instead of a refresh token.",
    answers: {
      200: { description: "A session, or none until the address is verified.", schema: sessionPayloadSchema },
    },
  }),
  rateLimit("EMAIL", "email"),
  jsonBody(emailPasswordBody),
  signUpChecks(),
  async (c) =>
    c.json(
      await signUpEmailPassword(signInScope(c, "email-password", { signUp: true }), c.req.valid("json")),
    ),
);
