import { Hono } from "hono";
import { z } from "zod";
import {
  changeUserEmail,
  confirmPhoneChange,
  findUserByEmail,
  type Session,
  sendPasswordResetEmail,
  sendVerificationEmail,
  signInPasswordlessEmail,
  signInPasswordlessSms,
  signInScope,
  type VerifiedTicket,
  verifyMailedCode,
  verifySignInPasswordlessSms,
} from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { logError } from "../../../http/context";
import { passSignUpChecks } from "../../../http/sign-up-gate";
import { passChallenge } from "../../../http/turnstile";
import { metadataSchema } from "../../../lib/json-metadata";
import { rateLimit, rateLimitByBody } from "../../../rate-limits/middleware";
import { GoTrueError } from "./errors";
import { verifyMailedToken } from "./imported-links";
import {
  allowedRedirect,
  asOtpRefusal,
  challengeOf,
  goTrueLinkForm,
  isMailType,
  MAIL_TYPES,
} from "./mail-links";
import { sessionWithFactors } from "./mfa-wire";
import { e164 } from "./phone";
import { bodyOf } from "./request";
import { signGoTrueToken } from "./tokens";
import { extrasOfSignIn, signInExtras } from "./user-reads";

/**
 * GoTrue's one-time codes and mailed links (contract supabase.md §2): `signInWithOtp` (`POST /otp`), `verifyOtp`
 * (`POST /verify`), `resend` and `resetPasswordForEmail` (`POST /recover`), each the core's own flow (links/), its
 * mails in GoTrue's form (mail-links.ts). Every send answers `{}` whether the address or number has an account or
 * not, and sends nothing to one that has none (unless it may be created): no answer tells which addresses exist.
 */

const captcha = z.object({ captcha_token: z.string().max(4096).nullish() }).nullish();
const captchaOf = (body: { gotrue_meta_security?: { captcha_token?: string | null } | null }) =>
  body.gotrue_meta_security?.captcha_token ?? null;

const email = z.email().max(254);
const phone = z.string().min(1).max(32);
const pkce = {
  code_challenge: z.string().max(128).nullish(),
  code_challenge_method: z.string().max(16).nullish(),
};

const otpRequest = z.object({
  email: email.nullish(),
  phone: phone.nullish(),
  data: metadataSchema.nullish(),
  create_user: z.boolean().nullish(),
  channel: z.enum(["sms", "whatsapp"]).nullish(),
  gotrue_meta_security: captcha,
  ...pkce,
});

const verifyRequest = z.object({
  type: z.string().max(32),
  token: z.string().max(200).nullish(),
  token_hash: z.string().max(200).nullish(),
  email: email.nullish(),
  phone: phone.nullish(),
  gotrue_meta_security: captcha,
});

const resendRequest = z.object({
  type: z.enum(["signup", "email_change", "sms", "phone_change"]),
  email: email.nullish(),
  phone: phone.nullish(),
  gotrue_meta_security: captcha,
});

const recoverRequest = z.object({ email, gotrue_meta_security: captcha, ...pkce });

/**
 * The limits of the Nhost routes for the same sends and checks (contract §11), keyed by the identifier the handler
 * will use: `/otp` sends to the email when the body names one (else texts the phone), `/verify` checks the phone's
 * code for the phone types and the email's for the others, `/resend` mails for the mail types and texts for `sms`.
 */
const isPhoneType = (type: unknown) => type === "sms" || type === "phone_change";
const otpLimit = rateLimitByBody("EMAIL", (body) =>
  body.email
    ? { bucket: "EMAIL", field: "email" }
    : body.phone
      ? { bucket: "SMS", field: "phone" }
      : { bucket: "EMAIL" },
);
const verifyLimit = rateLimitByBody("BRUTE_FORCE", (body) => ({
  bucket: "BRUTE_FORCE",
  field: isPhoneType(body.type) ? "phone" : "email",
}));
const resendLimit = rateLimitByBody("EMAIL", (body) =>
  isPhoneType(body.type) ? { bucket: "SMS", field: "phone" } : { bucket: "EMAIL", field: "email" },
);

/** A verified code's or link's session in GoTrue's shape; the TOTP step has no GoTrue form here (docs/supabase.md). */
function sessionOf(result: VerifiedTicket | { session: Session | null }): Session {
  if ("session" in result && result.session) return result.session;
  throw new GoTrueError(400, "mfa_challenge_needed", "This account signs in with a second factor");
}

export const goTrueOtpRoutes = new Hono<AppEnv>()
  .post("/otp", otpLimit, async (c) => {
    const body = await bodyOf(c, otpRequest);
    const { deps, config } = c.var;
    const mode = body.create_user === false ? "existing" : "sign-in";
    // A send that may create a user meets the sign-up checks, known address or not (src/http/sign-up-gate.ts).
    if (mode === "sign-in") await passSignUpChecks(deps, "passwordless", captchaOf(body));
    else await passChallenge(deps, ["passwordless"], captchaOf(body));
    const options = {
      metadata: body.data ?? undefined,
      redirectTo: allowedRedirect(config, c.req.query("redirect_to")),
    };
    try {
      if (body.email) {
        const scope = signInScope(c, "email-link", {
          minter: signGoTrueToken,
          linkForm: goTrueLinkForm(config),
        });
        await signInPasswordlessEmail(
          scope,
          { email: body.email, options, codeChallenge: challengeOf(body) },
          mode,
        );
      } else if (body.phone) {
        await signInPasswordlessSms(deps, { phoneNumber: e164(body.phone), options }, mode);
      } else {
        throw new GoTrueError(400, "validation_failed", "An email address or phone number is required");
      }
    } catch (error) {
      throw asOtpRefusal(error);
    }
    return c.json({});
  })
  .post("/verify", verifyLimit, async (c) => {
    const body = await bodyOf(c, verifyRequest);
    const { deps } = c.var;
    if (!body.token === !body.token_hash) {
      throw new GoTrueError(400, "validation_failed", "Verify requires either a token or a token hash");
    }
    if (body.token_hash && (body.email || body.phone)) {
      throw new GoTrueError(400, "validation_failed", "Only the token_hash and type should be provided");
    }
    const phoneType = body.type === "sms" || body.type === "phone_change";
    // The user object's identities and factors are read in the batch that writes the session: nothing is read after
    // the link's ticket is spent, where a fault could no longer put the ticket back (exchange-codes' put-back).
    const alongside = signInExtras();
    // GoTrue's rule (mfa-routes.ts): a user with a second factor gets an aal1 session, which mfa.verify steps up.
    const scope = signInScope(c, phoneType ? "sms-otp" : "email-otp", {
      minter: signGoTrueToken,
      secondFactorLater: true,
      alongside,
    });
    const answer = async (session: Session) =>
      c.json(await sessionWithFactors(deps, session, await extrasOfSignIn(deps, session.user.id, alongside)));
    try {
      if (body.type === "phone_change" && body.token && body.phone) {
        const result = await confirmPhoneChange(scope, { phoneNumber: e164(body.phone), code: body.token });
        return answer(sessionOf(result));
      }
      if (body.type === "sms" && body.token && body.phone) {
        const result = await verifySignInPasswordlessSms(scope, {
          phoneNumber: e164(body.phone),
          otp: body.token,
        });
        return answer(sessionOf(result));
      }
      if (!isMailType(body.type)) {
        throw new GoTrueError(400, "validation_failed", "Unsupported verification type");
      }
      const accepted = MAIL_TYPES[body.type];
      let verified: VerifiedTicket;
      if (body.token_hash) {
        verified = await verifyMailedToken(scope, body.token_hash, body.type, { direct: true });
      } else if (body.email && body.token) {
        verified = await verifyMailedCode(scope, { address: body.email, code: body.token, accepted });
      } else {
        throw new GoTrueError(
          400,
          "validation_failed",
          "Only an email address or phone number should be provided on verify",
        );
      }
      return answer(sessionOf(verified));
    } catch (error) {
      throw asOtpRefusal(error);
    }
  })
  .post("/resend", resendLimit, async (c) => {
    const body = await bodyOf(c, resendRequest);
    const { deps, config } = c.var;
    await passChallenge(deps, ["passwordless"], captchaOf(body));
    const request = {
      redirectTo: allowedRedirect(config, c.req.query("redirect_to")),
      form: goTrueLinkForm(config),
    };
    if ((body.type === "signup" || body.type === "email_change") && !body.email) {
      throw new GoTrueError(400, "validation_failed", "An email address is required");
    }
    if (body.type === "signup") {
      // A confirmed address is answered as an unknown one: no answer tells which addresses have accounts.
      await sendVerificationEmail(deps, body.email!, request).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === "email-already-verified")) throw error;
      });
    } else if (body.type === "email_change") {
      const user = await findUserByEmail(deps.shards, body.email!);
      // After the answer, as every send that must not tell a known address by its time (links/email-flows.ts).
      if (user?.newEmail && !user.disabled) {
        const pending = user.newEmail;
        deps.background(
          changeUserEmail(deps, user.id, pending, request).catch((error: unknown) =>
            logError(c.var.requestId, "email change resend", error),
          ),
        );
      }
    } else if (body.type === "sms") {
      if (!body.phone) throw new GoTrueError(400, "validation_failed", "A phone number is required");
      await signInPasswordlessSms(deps, { phoneNumber: e164(body.phone) }, "existing").catch(
        (error: unknown) => {
          throw asOtpRefusal(error);
        },
      );
    } else {
      throw new GoTrueError(
        400,
        "validation_failed",
        "A phone change code is resent by calling updateUser({ phone }) again",
      );
    }
    return c.json({});
  })
  .post("/recover", rateLimit("EMAIL", "email"), async (c) => {
    const body = await bodyOf(c, recoverRequest);
    const { deps, config } = c.var;
    await passChallenge(deps, ["password-reset"], captchaOf(body));
    await sendPasswordResetEmail(deps, body.email, {
      redirectTo: allowedRedirect(config, c.req.query("redirect_to")),
      codeChallenge: challengeOf(body),
      form: goTrueLinkForm(config),
    });
    return c.json({});
  });
