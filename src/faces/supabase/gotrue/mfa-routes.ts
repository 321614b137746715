import { Hono } from "hono";
import { renderSVG } from "uqr";
import { z } from "zod";
import {
  challengeFactor,
  enrollPhone,
  enrollTotp,
  enrollWebauthn,
  type Factor,
  factorOf,
  factorsOf,
  findUserById,
  removeFactor,
  signInScope,
  stepUpSession,
  verifyFactor,
} from "../../../auth";
import type { UserRow } from "../../../db/schema";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import type { Deps } from "../../../http/deps";
import { NOTHING_TO_PUT_BACK, onFaultPutBack, type PutBack } from "../../../lib/put-back";
import { rateLimit } from "../../../rate-limits/middleware";
import { GoTrueError } from "./errors";
import { verifyWebauthnAnswer, webauthnChallenge, webauthnDisabled } from "./mfa-webauthn";
import { factorRefusal, goTrueFactor, sessionWithFactors } from "./mfa-wire";
import { bodyOf, signedIn } from "./request";
import { signGoTrueToken } from "./tokens";
import { extrasOfSignIn, signInExtras } from "./user-reads";

/**
 * auth-js's `mfa` namespace (contract supabase.md §2, "Factors"): `enroll`, `challenge`, `verify` (and so
 * `challengeAndVerify`), `unenroll`, over the core's factors (src/auth/mfa/factors.ts); `listFactors` and
 * `getAuthenticatorAssuranceLevel` read `getUser`'s `factors` and the token's `aal`. A session's level is read from
 * its row, never from the token a client sends: `aal2` when the session began by a second factor.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// `issuer` is written into the otpauth:// URI, whose encoding throws on a lone surrogate: `bodyOf` refuses every body
// holding one (request.ts), this one included.
const enrollBody = z.object({
  factor_type: z.string().max(16),
  friendly_name: z.string().max(120).nullish(),
  issuer: z.string().max(120).nullish(),
  phone: z.string().max(32).nullish(),
});
// A `webauthn` factor's `{rpId, rpOrigins}` are ignored: the service's relying party is the only one (mfa-webauthn.ts).
const challengeBody = z
  .object({ channel: z.string().max(16).nullish(), webauthn: z.unknown().optional() })
  .nullish();
const verifyBody = z.object({
  challenge_id: z.string().max(64),
  code: z.string().max(32).nullish(),
  // A `webauthn` factor's answer (mfa-webauthn.ts checks it).
  webauthn: z.unknown().optional(),
});

/** The methods that make a session's `aal2` (tokens.ts says the same in the token). */
const SECOND_FACTOR_METHODS = new Set(["mfa-totp", "mfa-sms", "mfa-webauthn", "mfa-email", "mfa-passkey"]);
/** How the session a factor steps up to began (GoTrue's amr `totp`, `mfa/phone`, `mfa/webauthn`). */
const STEP_UP_METHOD = {
  totp: "mfa-totp",
  phone: "mfa-sms",
  webauthn: "mfa-webauthn",
  email: "mfa-email",
} as const;

/** The signed-in user (not anonymous: GoTrue's `requireNotAnonymous`) with the whole row, and the session's level. */
async function factorUser(c: Parameters<typeof signedIn>[0]) {
  const { claims, user: live } = await signedIn(c);
  if (live.isAnonymous) {
    throw new GoTrueError(403, "no_authorization", "Anonymous user not allowed to perform these actions");
  }
  const user = await findUserById(c.get("deps").shards, claims.sub);
  if (!user)
    throw new GoTrueError(403, "session_not_found", "Session from session_id claim in JWT does not exist");
  return { claims, user, aal2: SECOND_FACTOR_METHODS.has(live.sessionMethod ?? "") };
}

/** The path's factor, the user's own: another user's is "not found", as GoTrue's `loadFactor` says it. */
async function pathFactor(deps: Deps, user: UserRow, factorId: string): Promise<Factor> {
  if (!UUID.test(factorId)) throw new GoTrueError(404, "validation_failed", "factor_id must be an UUID");
  const factor = await factorOf(deps, user, factorId);
  if (!factor) throw new GoTrueError(404, "mfa_factor_not_found", "Factor not found");
  return factor;
}

/** Second factors switched off (`AUTH_MFA_ENABLED`): GoTrue's `mfa_<type>_enroll_not_enabled`. */
function enrollRefusal(error: unknown, type: "TOTP" | "Phone"): never {
  if (error instanceof AppError && error.code === "disabled-endpoint") {
    throw new GoTrueError(
      422,
      `mfa_${type.toLowerCase()}_enroll_not_enabled`,
      `MFA enroll is disabled for ${type}`,
    );
  }
  return factorRefusal(error);
}

/** GoTrue: a user with a verified factor adds another only at aal2 (validateFactors). */
async function enrollingAllowed(deps: Deps, user: UserRow, aal2: boolean): Promise<void> {
  if (!aal2 && (await factorsOf(deps, user)).some((f) => f.status === "verified")) {
    throw new GoTrueError(403, "insufficient_aal", "AAL2 required to enroll a new factor");
  }
}

/**
 * An unverified `webauthn` factor is verified by creating a key, which any authenticator can do (a TOTP or phone
 * factor needs its secret or its phone): so its challenge and answer are an enrollment, asking aal2 as enroll does.
 * Otherwise a stolen password's aal1 session could finish a factor left unverified with its own key and step up.
 */
async function webauthnCreateAllowed(deps: Deps, user: UserRow, factor: Factor, aal2: boolean) {
  if (factor.type === "webauthn" && factor.status === "unverified") await enrollingAllowed(deps, user, aal2);
}

const smsLimit = rateLimit("SMS");

export const goTrueMfaRoutes = new Hono<AppEnv>()
  .post("/factors", async (c) => {
    const { user, aal2 } = await factorUser(c);
    const body = await bodyOf(c, enrollBody);
    const { deps } = c.var;
    const friendlyName = body.friendly_name || null;
    await enrollingAllowed(deps, user, aal2);
    if (body.factor_type === "totp") {
      const made = await enrollTotp(deps, user.id, {
        friendlyName,
        issuer: body.issuer ?? undefined,
      }).catch((error: unknown) => enrollRefusal(error, "TOTP"));
      return c.json({
        id: made.factorId,
        type: "totp",
        totp: { qr_code: renderSVG(made.uri, { border: 4 }), secret: made.secret, uri: made.uri },
        friendly_name: friendlyName ?? "",
      });
    }
    if (body.factor_type === "phone") {
      if (!body.phone) {
        throw new GoTrueError(400, "validation_failed", "Phone number required to enroll Phone factor");
      }
      const made = await enrollPhone(deps, user.id, { phone: body.phone, friendlyName }).catch(
        (error: unknown) => enrollRefusal(error, "Phone"),
      );
      return c.json({ ...goTrueFactor(made), type: "phone" });
    }
    if (body.factor_type === "webauthn") {
      webauthnDisabled(deps, "enroll");
      const made = await enrollWebauthn(deps, user.id, { friendlyName }).catch(factorRefusal);
      return c.json({ id: made.id, type: "webauthn", friendly_name: friendlyName ?? "" });
    }
    throw new GoTrueError(400, "validation_failed", "factor_type needs to be totp, phone, or webauthn");
  })
  // Every challenge writes a ticket: limited per address as the other second-factor steps.
  .post("/factors/:factorId/challenge", rateLimit("BRUTE_FORCE"), async (c) => {
    const { user, aal2 } = await factorUser(c);
    const factor = await pathFactor(c.var.deps, user, c.req.param("factorId"));
    const body = await bodyOf(c, challengeBody);
    await webauthnCreateAllowed(c.var.deps, user, factor, aal2);
    if (factor.type === "webauthn") return c.json(await webauthnChallenge(c.var.deps, user, factor));
    if (factor.type === "phone") {
      if (body?.channel && body.channel !== "sms") {
        throw new GoTrueError(400, "validation_failed", "Invalid channel, must be one of sms or whatsapp");
      }
      // A phone challenge sends a text: the Nhost API's SMS limit holds too (a TOTP challenge sends nothing).
      await smsLimit(c, async () => {});
    }
    const challenge = await challengeFactor(c.var.deps, user, factor);
    return c.json({
      id: challenge.id,
      type: factor.type,
      expires_at: Math.floor(challenge.expiresAt / 1000),
    });
  })
  // Codes are guesses: limited per address as the Nhost API's TOTP step, beside the per-user guard and lockout.
  .post("/factors/:factorId/verify", rateLimit("BRUTE_FORCE"), async (c) => {
    const { claims, user, aal2 } = await factorUser(c);
    const { deps } = c.var;
    const factor = await pathFactor(deps, user, c.req.param("factorId"));
    const body = await bodyOf(c, verifyBody);
    if (!body.code && factor.type !== "webauthn") {
      throw new GoTrueError(400, "validation_failed", "Code needs to be non-empty");
    }
    if (!UUID.test(body.challenge_id)) {
      throw new GoTrueError(400, "validation_failed", "challenge_id must be an UUID");
    }
    // A passkey's answer spends its ceremony in its object, and a retry makes a new one: nothing to put back.
    let taken: PutBack = NOTHING_TO_PUT_BACK;
    if (factor.type === "webauthn") {
      await webauthnCreateAllowed(deps, user, factor, aal2);
      await verifyWebauthnAnswer(deps, user, factor, body);
    } else {
      taken = await verifyFactor(deps, user, factor, {
        challengeId: body.challenge_id,
        code: body.code ?? "",
      }).catch((error: unknown) => factorRefusal(error, factor, body.challenge_id));
    }
    // A fault from here on puts a code's challenge back (verifyFactor), answered again with the next code.
    return onFaultPutBack(taken, async () => {
      // The user object's identities and factors come from the new session's batch: nothing is read once the
      // replaced session is ended, where a fault would leave the person with neither session.
      const alongside = signInExtras();
      const scope = signInScope(c, STEP_UP_METHOD[factor.type], { minter: signGoTrueToken, alongside });
      // The user as the factor left it (a TOTP just turned on): the new session's claims read it.
      const now = (await findUserById(deps.shards, user.id)) ?? user;
      const session = await stepUpSession(scope, now, factor, claims.session_id);
      return c.json(await sessionWithFactors(deps, session, await extrasOfSignIn(deps, user.id, alongside)));
    });
  })
  .delete("/factors/:factorId", async (c) => {
    const { user, aal2 } = await factorUser(c);
    const factor = await pathFactor(c.var.deps, user, c.req.param("factorId"));
    // A stolen first factor must not remove the second (GoTrue's UnenrollFactor).
    if (factor.status === "verified" && !aal2) {
      throw new GoTrueError(422, "insufficient_aal", "AAL2 required to unenroll verified factor");
    }
    await removeFactor(c.var.deps, user.id, factor);
    return c.json({ id: factor.id });
  });
