import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { refuseImportedToken, requireAuth } from "../../http/auth";
import { OK_ANSWER, operation } from "../../http/documented";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { readsOwnWriteBack } from "../sessions";
import { signInScope } from "../sign-in";
import { authenticationCredential } from "../webauthn";
import { chooseSecondStep, dropSecondStepChoice } from "./mfa-choice";
import { changeMfa, createRecoveryCodes, generateTotp } from "./totp-setup";
import { verifySignInMfaEmail, verifySignInMfaSms, verifySignInMfaTotp } from "./totp-sign-in";
import { signInMfaWebauthn, verifySignInMfaWebauthn } from "./webauthn-sign-in";

const codeField = z.string().min(1).max(32);

/** changeUserMfa, verifyChangeUserMfa, verifySignInMfaTotp (contract §3.2, §3.4) and recovery codes (improvement). */
export const mfaRoutes = new Hono<AppEnv>()
  .get(
    "/mfa/totp/generate",
    operation({
      summary: "Start setting up TOTP",
      description:
        "A new TOTP secret (base32) and its QR code (`data:image/png;base64,…` of the `otpauth://` URI) for an " +
        "authenticator app; it is active only once `POST /user/mfa` confirms a code. Off unless `AUTH_MFA_ENABLED` " +
        "(409); 400 `totp-already-active`.",
      security: "bearer",
      answers: {
        200: {
          description: "The secret and its QR code.",
          schema: z.object({ imageUrl: z.string(), totpSecret: z.string() }),
          example: { imageUrl: "data:image/png;base64,iVBORw0KGgo…", totpSecret: "JBSWY3DPEHPK3PXP" },
        },
      },
    }),
    requireAuth,
    refuseImportedToken,
    async (c) => c.json(await generateTotp(c.var.deps, c.var.auth!.sub)),
  )
  .post(
    "/user/mfa",
    operation({
      summary: "Choose the second step",
      description:
        '`activeMfaType: "totp"` with a code from the app activates TOTP (400 `totp-already-active`, 400 ' +
        '`no-totp-secret`, 401 `invalid-totp`); `""` or absent with a current code deactivates it (401 ' +
        "`disabled-mfa-totp` when no second step is on). Wrong codes are capped per user. Beyond TOTP (issue 47): " +
        '`"email"` makes a code mailed to the verified address the step (401 `unverified-user` for an unverified ' +
        'one), `"sms"` a verified phone factor, `"webauthn"` a passkey or security key (400 `mfa-type-not-found` ' +
        "without one); no code is asked, but the elevated claim is under `AUTH_REQUIRE_ELEVATED_CLAIM`, and TOTP, " +
        'while on, stays the step (400 `totp-already-active`). `""` turns such a step off.',
      security: "bearer",
      answers: { 200: OK_ANSWER("Changed.") },
    }),
    rateLimit("BRUTE_FORCE"),
    requireAuth,
    jsonBody(
      z.object({
        code: codeField.optional(),
        activeMfaType: z.enum(["totp", "sms", "email", "webauthn", ""]).optional(),
      }),
    ),
    readsOwnWriteBack,
    async (c) => {
      const { code, activeMfaType } = c.req.valid("json");
      const { deps } = c.var;
      // The bearer's claims, never confirmed by themselves: the elevated claim decides (mfa-choice.ts).
      const caller = { ...c.var.auth!, confirmed: false };
      if (activeMfaType === "sms" || activeMfaType === "email" || activeMfaType === "webauthn") {
        await chooseSecondStep(deps, caller, activeMfaType);
      } else if (!activeMfaType && (await dropSecondStepChoice(deps, caller))) {
        // A step other than TOTP turned off: no code of it to give.
      } else {
        if (code === undefined) throw new AppError("invalid-request", "code is required");
        await changeMfa(deps, c.var.auth!.sub, { code, activeMfaType });
      }
      return c.json("OK");
    },
  )
  .post(
    "/mfa/recovery-codes",
    operation({
      summary: "Make recovery codes",
      description:
        "Ten single-use codes that stand in for a TOTP code (lost phone), replacing any earlier ones; needs a current " +
        "TOTP code. Shown this once; stored hashed.",
      security: "bearer",
      answers: {
        200: {
          description: "The codes.",
          schema: z.object({ recoveryCodes: z.array(z.string()) }),
          example: { recoveryCodes: ["k7m2-9qfp-x4rt", "…"] },
        },
      },
    }),
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
    operation({
      summary: "Finish a sign-in with TOTP",
      description:
        "The `mfa.ticket` of a first-factor sign-in and a TOTP (or recovery) code; for a user whose second factor is " +
        "a phone, an `mfaSms:` ticket and the code texted at the first step (as `/signin/mfa/sms`). " +
        "Unknown or expired ticket: 401 " +
        "`invalid-ticket`; wrong code: 401 `invalid-totp` (five tries per ticket, and capped per user). Ten wrong " +
        "TOTP codes (or recovery codes) within an hour lock that factor: 429 `account-locked` with `Retry-After`.",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200), otp: codeField })),
    async (c) => c.json(await verifySignInMfaTotp(signInScope(c, "mfa-totp"), c.req.valid("json"))),
  )
  .post(
    "/signin/mfa/sms",
    operation({
      summary: "Finish a sign-in with a texted code",
      description:
        "The `mfaSms:` ticket of a first-factor sign-in (`activeMfaType` `sms`) and the code texted to the phone " +
        "factor with it. Unknown, expired, used or another step's ticket: 401 `invalid-ticket`; wrong code: 401 " +
        "`invalid-totp` (five tries per ticket, and capped per user).",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200), otp: codeField })),
    async (c) => c.json(await verifySignInMfaSms(signInScope(c, "mfa-sms"), c.req.valid("json"))),
  )
  .post(
    "/signin/mfa/email",
    operation({
      summary: "Finish a sign-in with a mailed code",
      description:
        "The `mfaEmail:` ticket of a first-factor sign-in (`activeMfaType` `email`) and the six-digit code mailed " +
        "with it to the user's verified address (five minutes, once, only with the ticket it was mailed for). " +
        "Unknown, expired, used or another step's ticket: 401 `invalid-ticket`; wrong code: 401 `invalid-totp` " +
        "(five tries per ticket, and capped per user).",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200), otp: codeField })),
    async (c) => c.json(await verifySignInMfaEmail(signInScope(c, "mfa-email"), c.req.valid("json"))),
  )
  .post(
    "/signin/mfa/webauthn",
    operation({
      summary: "Start the passkey second step",
      description:
        "The `mfaWebauthn:` ticket of a first-factor sign-in (`activeMfaType` `webauthn`): request options allowing " +
        "every passkey or security key of the user (and a `webauthn` factor's key), for " +
        "`PublicKeyCredential.parseRequestOptionsFromJSON`; user verification as " +
        "`AUTH_MFA_WEBAUTHN_USER_VERIFICATION` says. Dead ticket: 401 `invalid-ticket`; WebAuthn off: 409.",
      answers: {
        200: {
          description: "Credential request options.",
          schema: z.looseObject({ challenge: z.string() }),
        },
      },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200) })),
    async (c) => c.json(await signInMfaWebauthn(c.var.deps, c.req.valid("json").ticket)),
  )
  .post(
    "/signin/mfa/webauthn/verify",
    operation({
      summary: "Finish a sign-in with the passkey second step",
      description:
        "The ticket and the browser's assertion (`credential.toJSON()`) answering the options of " +
        "`/signin/mfa/webauthn` for that ticket. A bad assertion, or a challenge of another ticket: 400 " +
        "`invalid-request`; dead ticket: 401 `invalid-ticket` (five tries, spent once). With user verification the " +
        "session counts as phishing-resistant (`phr`); without, as a second factor.",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ ticket: z.string().min(1).max(200), credential: authenticationCredential })),
    async (c) => {
      const { ticket, credential } = c.req.valid("json");
      return c.json(
        await verifySignInMfaWebauthn(signInScope(c, "mfa-webauthn"), {
          ticket,
          // zod checked the shape; the library checks everything inside.
          credential: credential as unknown as AuthenticationResponseJSON,
        }),
      );
    },
  );
