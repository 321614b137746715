import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { optionalAuth, requireAuth } from "../../http/auth";
import { codeChallengeField, emailField, passwordField, redirectOptions } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import {
  changeUserEmail,
  requireRegisteredUser,
  sendPasswordResetEmail,
  sendVerificationEmail,
} from "../links/email-flows";
import { requireElevation } from "../webauthn/elevation";
import { deanonymizeUser } from "./anonymous";
import { changeUserPassword } from "./password-change";
import { signUpOptionsSchema } from "./sign-up-options";

const emailWithRedirect = z.object({
  email: emailField,
  options: redirectOptions,
  codeChallenge: codeChallengeField,
});

/** Account management by email (contract §3.4). */
export const accountRoutes = new Hono<AppEnv>()
  .post(
    "/user/email/change",
    rateLimit("EMAIL", "newEmail"),
    requireAuth,
    requireElevation(),
    jsonBody(z.object({ newEmail: emailField, options: redirectOptions, codeChallenge: codeChallengeField })),
    async (c) => {
      const { newEmail, options, codeChallenge } = c.req.valid("json");
      const user = await requireRegisteredUser(c.var.deps, c.var.auth!.sub);
      await changeUserEmail(c.var.deps, user.id, newEmail, { ...options, codeChallenge });
      return c.json("OK");
    },
  )
  .post(
    "/user/email/send-verification-email",
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithRedirect),
    async (c) => {
      const { email, options, codeChallenge } = c.req.valid("json");
      await sendVerificationEmail(c.var.deps, email, { ...options, codeChallenge });
      return c.json("OK");
    },
  )
  .post(
    "/user/password",
    rateLimit("BRUTE_FORCE"),
    optionalAuth,
    requireElevation(),
    jsonBody(z.object({ newPassword: passwordField, ticket: z.string().max(200).optional() })),
    async (c) => {
      await changeUserPassword(c.var.deps, c.req.valid("json"), c.var.auth);
      return c.json("OK");
    },
  )
  .post("/user/password/reset", rateLimit("EMAIL", "email"), jsonBody(emailWithRedirect), async (c) => {
    const { email, options, codeChallenge } = c.req.valid("json");
    await sendPasswordResetEmail(c.var.deps, email, { ...options, codeChallenge });
    return c.json("OK");
  })
  .post(
    "/user/deanonymize",
    rateLimit("EMAIL", "email"),
    requireAuth,
    jsonBody(
      z.object({
        signInMethod: z.enum(["email-password", "passwordless"]),
        email: emailField,
        password: passwordField.optional(),
        options: signUpOptionsSchema.optional(),
        codeChallenge: codeChallengeField,
      }),
    ),
    async (c) => {
      await deanonymizeUser(c.var.deps, c.var.auth!.sub, c.req.valid("json"));
      return c.json("OK");
    },
  );
