import { Hono } from "hono";
import { z } from "zod";
import {
  type Alongside,
  findUserByEmail,
  renewSession,
  signInAnonymous,
  signInEmailPassword,
  signInPhonePassword,
  signInScope,
  signUpEmailPassword,
  signUpPhonePassword,
  toWireUser,
} from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { passSignUpChecks } from "../../../http/sign-up-gate";
import { passChallenge } from "../../../http/turnstile";
import { metadataSchema } from "../../../lib/json-metadata";
import { signInByIdToken } from "../../../providers";
import { rateLimit, rateLimitBeside, rateLimitByBody } from "../../../rate-limits/middleware";
import { GoTrueError } from "./errors";
import { challengeOf, goTrueLinkForm } from "./mail-links";
import { sessionWithFactors } from "./mfa-wire";
import { pkceGrant } from "./oauth-routes";
import { e164 } from "./phone";
import { bodyOf } from "./request";
import { signGoTrueToken } from "./tokens";
import { extrasOfLiveRow, liveUserExtrasRead } from "./user-of-session";
import { extrasOfSignIn, signInExtras } from "./user-reads";
import { goTrueSession, goTrueUser } from "./wire";

/**
 * GoTrue's sign-up (email and password, or anonymous), password and refresh grants (contract supabase.md §2), each a
 * call of the same core flow the Nhost routes call, its answer shaped as GoTrue's. What auth-js sends: JSON bodies
 * (absent fields as `null`), the grant in the query (`/token?grant_type=…`), the captcha token in
 * `gotrue_meta_security`, `redirect_to` in the query.
 */

const captcha = z.object({ captcha_token: z.string().max(4096).nullish() }).nullish();
const captchaOf = (body: { gotrue_meta_security?: { captcha_token?: string | null } | null }) =>
  body.gotrue_meta_security?.captcha_token ?? null;

const signUpBody = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024).nullish(),
  // The same bounds as every metadata (depth, size): a hostile nesting is a 400, never a stack overflow.
  data: metadataSchema.nullish(),
  gotrue_meta_security: captcha,
  code_challenge: z.string().max(128).nullish(),
  code_challenge_method: z.string().max(16).nullish(),
});

const passwordGrant = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024),
  gotrue_meta_security: captcha,
});

const refreshGrant = z.object({ refresh_token: z.string().min(1).max(200) });

/**
 * GoTrue's own refresh tokens, which a client signed in before the move holds (src/move-in/supabase-sessions.ts): the
 * 12-character ones and the v2 ones (base64url of 38 to 46 bytes).
 */
const GOTRUE_REFRESH_TOKEN = /^(?:[a-z0-9]{12}|[A-Za-z0-9_-]{51,62})$/;

/** auth-js's signInWithIdToken: the providers the service verifies ID tokens of (contract §3.2). */
const idTokenGrant = z.object({
  provider: z.string().max(32),
  id_token: z.string().min(1).max(8192),
  nonce: z.string().min(1).max(512).nullish(),
  access_token: z.string().max(8192).nullish(),
  gotrue_meta_security: captcha,
});

/**
 * A sign-in's session. This face's sign-ins ask for GoTrue's rule (`secondFactorLater`): a user with a verified
 * second factor gets an `aal1` session to step up with `mfa.verify` (mfa-routes.ts), never the Nhost face's ticket;
 * a sign-in without it would still be refused rather than answered without a session.
 */
function sessionOrRefusal<S>(session: S | null): S {
  if (!session)
    throw new GoTrueError(400, "mfa_challenge_needed", "This account signs in with a second factor");
  return session;
}

/**
 * The Nhost routes' limits for the same flows (contract §11): per address, and per account the body names. The
 * password grant's is counted beside the flow's first reads, as `POST /signin/email-password`'s (issue 48, "Round
 * trips"): the flow awaits it before it writes or looks at the password, and a captcha before it is sent to
 * siteverify.
 */
const GRANT_LIMITS: Record<string, ReturnType<typeof rateLimit>> = {
  // Per account by the email or, for a grant by number, the phone (one key with the SMS sign-in's `phoneNumber`).
  password: rateLimitBeside("BRUTE_FORCE", ["email", "phone"]),
  refresh_token: rateLimit("REFRESH"),
  id_token: rateLimit("BRUTE_FORCE"),
  pkce: rateLimit("BRUTE_FORCE"),
};

const signUpLimit = rateLimitByBody("EMAIL", (body) =>
  body.email ? { bucket: "EMAIL", field: "email" } : body.phone ? { bucket: "SMS", field: "phone" } : null,
);

export const goTrueSessionRoutes = new Hono<AppEnv>()
  .use("/token", async (c, next) => {
    const grant = c.req.query("grant_type") ?? "";
    // Own keys only: `constructor` or `toString` in the query named Object's own functions, run as a middleware (a 500).
    return Object.hasOwn(GRANT_LIMITS, grant) ? GRANT_LIMITS[grant]!(c, next) : next();
  })
  // The confirmation goes where the body says: mailed to its email, else texted to its phone (with a password). A
  // body naming neither is an anonymous sign-in, counted as the Nhost API's by the sign-up checks alone.
  .post("/signup", signUpLimit, async (c) => {
    const body = await bodyOf(c, signUpBody);
    const { deps } = c.var;
    if (!body.email && !body.phone && !body.password) {
      // auth-js's signInAnonymously: a sign-up with nothing but `data`.
      await passSignUpChecks(deps, undefined, captchaOf(body));
      const scope = signInScope(c, "anonymous", { signUp: true, minter: signGoTrueToken });
      try {
        const { session } = await signInAnonymous(scope, { metadata: body.data ?? undefined });
        return c.json(goTrueSession(session, deps.now()));
      } catch (error) {
        if (error instanceof AppError && error.code === "disabled-endpoint") {
          throw new GoTrueError(422, "anonymous_provider_disabled", "Anonymous sign-ins are disabled");
        }
        throw error;
      }
    }
    if (body.phone && body.password && !body.email) {
      // A phone and a password: the account, and a code texted to prove the number (verifyOtp type `sms`).
      await passSignUpChecks(deps, undefined, captchaOf(body));
      const scope = signInScope(c, "email-password", { signUp: true, minter: signGoTrueToken });
      const made = await signUpPhonePassword(scope, {
        phoneNumber: e164(body.phone),
        password: body.password,
        options: { metadata: body.data ?? undefined },
      });
      return c.json(goTrueUser(toWireUser(made)));
    }
    if (!body.email || !body.password) {
      throw new GoTrueError(
        400,
        "validation_failed",
        "Sign-up requires an email or a phone number, and a password",
      );
    }
    await passSignUpChecks(deps, undefined, captchaOf(body));
    // The confirmation mail in GoTrue's form (mail-links.ts).
    const scope = signInScope(c, "email-password", {
      signUp: true,
      minter: signGoTrueToken,
      linkForm: goTrueLinkForm(deps.config),
    });
    const { session } = await signUpEmailPassword(scope, {
      email: body.email,
      password: body.password,
      options: { metadata: body.data ?? undefined, redirectTo: c.req.query("redirect_to") },
      // Under PKCE (auth-js's flowType "pkce", @supabase/ssr's), the mailed link comes back with `?code=`.
      codeChallenge: challengeOf(body),
    });
    if (session) return c.json(goTrueSession(session, deps.now()));
    // Confirmation needed: GoTrue answers the user, without a session.
    const made = await findUserByEmail(deps.shards, body.email);
    if (!made) throw new AppError("internal-server-error", undefined, "a new user was not found");
    return c.json(goTrueUser(toWireUser(made)));
  })
  .post("/token", async (c) => {
    const grant = c.req.query("grant_type");
    if (grant === "password") {
      const body = await bodyOf(c, passwordGrant);
      if (!body.email && !body.phone) {
        throw new GoTrueError(400, "validation_failed", "An email address or phone number is required");
      }
      // The limit has counted before a captcha goes to siteverify (a flood is refused without it).
      const pendingCount = c.get("pendingCount");
      if (pendingCount && c.get("config").turnstile?.endpoints.has("signin")) await pendingCount;
      await passChallenge(c.get("deps"), ["signin"], captchaOf(body));
      // The user object's identities and factors are read in the batch that writes the session (no round trip more).
      const alongside = signInExtras();
      const scope = signInScope(c, "email-password", {
        minter: signGoTrueToken,
        secondFactorLater: true,
        alongside,
      });
      try {
        const { session } = body.email
          ? await signInEmailPassword(scope, { email: body.email, password: body.password })
          : await signInPhonePassword(scope, { phoneNumber: e164(body.phone!), password: body.password });
        const signedIn = sessionOrRefusal(session);
        const extras = await extrasOfSignIn(c.get("deps"), signedIn.user.id, alongside);
        return c.json(await sessionWithFactors(c.get("deps"), signedIn, extras));
      } catch (error) {
        // GoTrue refuses a banned user's password grant with 400.
        if (error instanceof AppError && error.code === "disabled-user") {
          throw new GoTrueError(400, "user_banned", "User is banned");
        }
        if (error instanceof AppError && error.code === "unverified-user" && !body.email) {
          throw new GoTrueError(400, "phone_not_confirmed", "Phone not confirmed");
        }
        throw error;
      }
    }
    if (grant === "refresh_token") {
      const { refresh_token } = await bodyOf(c, refreshGrant);
      // The user object's identities and factors are read in the statement that reads the session (no query more):
      // the face's session read replaces the Nhost face's.
      const alongside: Alongside = { read: liveUserExtrasRead };
      const session = await renewSession(c.get("deps"), refresh_token, undefined, undefined, {
        minter: signGoTrueToken,
        alongside,
        importedShape: GOTRUE_REFRESH_TOKEN,
      });
      const extras = alongside.row && (await extrasOfLiveRow(c.get("deps"), alongside.row));
      return c.json(await sessionWithFactors(c.get("deps"), session, extras));
    }
    if (grant === "id_token") {
      const body = await bodyOf(c, idTokenGrant);
      if (body.provider !== "google" && body.provider !== "apple") {
        throw new GoTrueError(
          400,
          "validation_failed",
          `Custom OIDC provider "${body.provider}" not allowed`,
        );
      }
      // A token solved for a sign-up lets a new user through the sign-up challenge (src/http/sign-up-gate.ts).
      const token = captchaOf(body);
      if (token) await passChallenge(c.var.deps, ["signup"], token);
      const alongside = signInExtras();
      const scope = signInScope(c, "id-token", {
        minter: signGoTrueToken,
        secondFactorLater: true,
        alongside,
      });
      const { session } = await signInByIdToken(scope, {
        provider: body.provider,
        idToken: body.id_token,
        nonce: body.nonce ?? undefined,
      }).catch((error: unknown) => {
        // A token that does not verify (audience, expiry, signature, nonce): GoTrue's 400 "Bad ID token".
        if (error instanceof AppError && error.code === "unauthorized") {
          throw new GoTrueError(400, "bad_jwt", "Bad ID token");
        }
        throw error;
      });
      const signedIn = sessionOrRefusal(session);
      const extras = await extrasOfSignIn(c.var.deps, signedIn.user.id, alongside);
      return c.json(await sessionWithFactors(c.var.deps, signedIn, extras));
    }
    // exchangeCodeForSession (oauth-routes.ts).
    if (grant === "pkce") return pkceGrant(c);
    throw new GoTrueError(400, "validation_failed", "unsupported_grant_type");
  });
