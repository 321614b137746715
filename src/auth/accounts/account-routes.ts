import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { optionalAuth, requireAuth } from "../../http/auth";
import { OK_ANSWER, operation } from "../../http/documented";
import { codeChallengeField, emailField, passwordField, redirectOptions } from "../../http/fields";
import { signUpChecks } from "../../http/sign-up-gate";
import { turnstile } from "../../http/turnstile";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { changeUserEmail, sendPasswordResetEmail, sendVerificationEmail } from "../links";
import { readsOwnWriteBack } from "../sessions";
import { signUpOptionsSchema } from "../sign-up-options";
import { requireRegisteredUser } from "../users";
import { requireElevation } from "../webauthn";
import { deanonymizeUser } from "./anonymous";
import { changeUserPassword } from "./password-change";

const emailWithRedirect = z.object({
  email: emailField,
  options: redirectOptions,
  codeChallenge: codeChallengeField,
});

/** Account management by email (contract §3.4). */
export const accountRoutes = new Hono<AppEnv>()
  .post(
    "/user/email/change",
    operation({
      summary: "Change the email address",
      description:
        "Mails a confirmation link (`emailConfirmChange`, one hour) to the **new** address; the address changes when " +
        "the link is followed. Needs an elevated token when the user has security keys (401 `unauthorized`: " +
        "`POST /elevate/webauthn` first). " +
        "409 `email-already-in-use`; 403 `forbidden-anonymous` for anonymous users.",
      security: "elevated",
      answers: { 200: OK_ANSWER("The link is on its way.") },
    }),
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
    operation({
      summary: "Send the verification link again",
      description:
        'Mails a new verification link. An unknown address also answers `"OK"` and sends nothing (no ' +
        "enumeration); an address verified already answers 400 `email-already-verified`.",
      answers: { 200: OK_ANSWER("Sent if the address needs it.") },
    }),
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
    operation({
      summary: "Change the password",
      description:
        "With an access token: that user's password (elevation rules apply). Without one: `ticket` " +
        "(`passwordReset:<uuid>`, from the reset mail) is required and single use, else 401 `invalid-ticket`. Every " +
        "other session of the user ends (with a ticket, every session: it has none of its own) unless " +
        "`signOutOthers` is `false`; PATs and outstanding links end regardless. 400 `password-too-short` or " +
        "`password-in-hibp-database` for a weak one.",
      security: "optional-bearer",
      answers: { 200: OK_ANSWER("Changed.") },
    }),
    rateLimit("BRUTE_FORCE"),
    optionalAuth,
    requireElevation(),
    jsonBody(
      z.object({
        newPassword: passwordField,
        ticket: z.string().max(200).optional(),
        signOutOthers: z
          .boolean()
          .optional()
          .describe(
            "Default `true`: every other session of the user ends; `false` keeps them (contract §13)",
          ),
      }),
    ),
    async (c) => {
      await changeUserPassword(c.var.deps, c.req.valid("json"), c.var.auth);
      return c.json("OK");
    },
  )
  .post(
    "/user/password/reset",
    operation({
      summary: "Send a password reset link",
      description:
        "Mails a link with a `passwordReset:<uuid>` ticket (one hour) that signs the user in to choose a new " +
        'password. Answers `"OK"` for unknown and disabled users too (no enumeration).',
      answers: { 200: OK_ANSWER("Sent if the account exists.") },
    }),
    rateLimit("EMAIL", "email"),
    jsonBody(emailWithRedirect),
    turnstile("password-reset"),
    async (c) => {
      const { email, options, codeChallenge } = c.req.valid("json");
      await sendPasswordResetEmail(c.var.deps, email, { ...options, codeChallenge });
      return c.json("OK");
    },
  )
  .post(
    "/user/deanonymize",
    operation({
      summary: "Make an anonymous user a regular one",
      description:
        "The anonymous user keeps their id and data and gets an email (and a password, for `email-password`). With " +
        "verification required a verification link is mailed; `passwordless` mails a magic link. 400 " +
        "`user-not-anonymous`, 409 `email-already-in-use`.",
      security: "bearer",
      answers: { 200: OK_ANSWER("Done; a mail may be on its way.") },
    }),
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
    // Deanonymizing makes a regular account: the sign-up checks, as for any other way in.
    signUpChecks(),
    readsOwnWriteBack,
    async (c) => {
      await deanonymizeUser(c.var.deps, c.var.auth!.sub, c.req.valid("json"));
      return c.json("OK");
    },
  );
