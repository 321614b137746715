import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { type Context, Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../../../audit/admin-action";
import {
  addSecurityKey,
  authenticationCredential,
  deleteSecurityKey,
  elevationSatisfied,
  listSecurityKeys,
  registrationCredential,
  renameSecurityKey,
  signInScope,
  signInWebauthn,
  verifyAddSecurityKey,
  verifySignInWebauthn,
  type WireSecurityKey,
} from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import { rateLimit } from "../../../rate-limits/middleware";
import { requireServiceRole, userOf } from "./admin-routes";
import { hasSecondFactor } from "./assurance";
import { GoTrueError } from "./errors";
import { sessionWithFactors } from "./mfa-wire";
import { bodyOf, signedIn } from "./request";
import { signGoTrueToken } from "./tokens";

/**
 * GoTrue's passkeys (contract supabase.md §2; auth-js's `signInWithPasskey`, `registerPasskey`, the `passkey`
 * namespace and `admin.passkey`): the core's WebAuthn ceremonies (src/auth/webauthn/), the same ones as the Nhost
 * API's `/signin/webauthn` and `/user/webauthn/add`, over the same keys, so a passkey added through either face is
 * listed and signs in through the other. The challenge lives in its WebauthnChallenge object and is taken once.
 *
 * GoTrue names a challenge by a `challenge_id` sent beside the response; the core finds a ceremony by the challenge
 * itself (inside the signed `clientDataJSON`), so the face's `challenge_id` is the challenge, and a response whose
 * client data answers another one is refused before anything is taken.
 */

const verifyBody = z.object({
  challenge_id: z.string().max(256).nullish(),
  credential: z.unknown(),
});

/** auth-js sends the captcha token; the core's WebAuthn sign-in takes no Turnstile challenge (only `signin` does). */
const optionsBody = z
  .object({ gotrue_meta_security: z.object({ captcha_token: z.string().max(4096).nullish() }).nullish() })
  .nullish();

const renameBody = z.object({ friendly_name: z.string().nullish() });

/** `{challenge_id, credential}` checked as GoTrue checks them, the credential against the core's own schema. */
async function responseOf<T>(c: Context<AppEnv>, schema: z.ZodType): Promise<T> {
  const body = await bodyOf(c, verifyBody);
  if (!body.challenge_id) throw new GoTrueError(400, "validation_failed", "challenge_id is required");
  if (body.credential === undefined || body.credential === null) {
    throw new GoTrueError(400, "validation_failed", "credential is required");
  }
  const parsed = schema.safeParse(body.credential);
  if (!parsed.success)
    throw new GoTrueError(400, "webauthn_verification_failed", "Invalid credential response");
  const credential = parsed.data as { response: { clientDataJSON: string } };
  let answered: unknown;
  try {
    answered = JSON.parse(isoBase64URL.toUTF8String(credential.response.clientDataJSON)).challenge;
  } catch {
    throw new GoTrueError(400, "webauthn_verification_failed", "Invalid credential response");
  }
  if (answered !== body.challenge_id) {
    throw new GoTrueError(400, "webauthn_challenge_not_found", "Challenge not found or already used");
  }
  return parsed.data as T;
}

/** GoTrue's answer to either options call: the challenge's id, the options, when it stops being usable. */
function optionsAnswer(deps: AppEnv["Variables"]["deps"], options: { challenge: string; timeout?: number }) {
  return {
    challenge_id: options.challenge,
    options,
    expires_at: Math.floor((deps.now() + (options.timeout ?? 0)) / 1000),
  };
}

/** A GoTrue passkey list item (`PasskeyListItem`); the service keeps no last-use time, so it is left out. */
const passkeyItem = (key: WireSecurityKey) => ({
  id: key.id,
  ...(key.nickname ? { friendly_name: key.nickname } : {}),
  created_at: key.createdAt,
});

const PASSKEY_NOT_FOUND = () => new GoTrueError(404, "validation_failed", "Passkey not found");

/**
 * The signed-in user who may manage passkeys: not anonymous (GoTrue's `requireNotAnonymous`), and, as GoTrue asks,
 * at AAL2 when the account has a second factor: otherwise a stolen password's first-factor session could add a
 * passkey, which signs in with no second factor. And the core's elevation rule (contract §6,
 * `AUTH_REQUIRE_ELEVATED_CLAIM`), as the Nhost API asks it for adding (the first key excepted) and removing a key.
 */
async function manager(c: Context<AppEnv>, change: { firstKeyAllowed: boolean }) {
  const { claims, user } = await signedIn(c);
  if (user.isAnonymous) {
    throw new GoTrueError(403, "no_authorization", "Anonymous user not allowed to perform these actions");
  }
  const token = claims as typeof claims & {
    aal?: unknown;
    "https://hasura.io/jwt/claims"?: Record<string, unknown>;
  };
  if (token.aal !== "aal2" && (await hasSecondFactor(c.var.deps, user))) {
    throw new GoTrueError(
      403,
      "insufficient_aal",
      "AAL2 session is required to manage passkeys when MFA is enabled",
    );
  }
  if (!(await elevationSatisfied(c.var.deps, token, change))) {
    throw new GoTrueError(
      403,
      "insufficient_aal",
      "An elevated session (a fresh proof with a passkey) is required to manage passkeys",
    );
  }
  return user;
}

function passkeysEnabled(c: Context<AppEnv>) {
  if (!c.var.config.webauthn.enabled) throw new GoTrueError(404, "passkey_disabled", "Passkeys are disabled");
}

export const goTruePasskeyRoutes = new Hono<AppEnv>()
  // GoTrue's requirePasskeyEnabled; the pattern covers `/passkeys` itself too.
  .use("/passkeys/*", async (c, next) => {
    passkeysEnabled(c);
    await next();
  })
  // signInWithPasskey's first step: a discoverable-credential challenge, names nobody. Counted as the API's.
  .post("/passkeys/authentication/options", rateLimit("BRUTE_FORCE"), async (c) => {
    await bodyOf(c, optionsBody);
    return c.json(optionsAnswer(c.var.deps, await signInWebauthn(c.var.deps)));
  })
  .post("/passkeys/authentication/verify", rateLimit("BRUTE_FORCE"), async (c) => {
    const credential = await responseOf<AuthenticationResponseJSON>(c, authenticationCredential);
    const scope = signInScope(c, "webauthn", { minter: signGoTrueToken });
    const { session } = await verifySignInWebauthn(scope, credential);
    return c.json(await sessionWithFactors(c.var.deps, session));
  })
  // registerPasskey: for the signed-in user only; a passkey is a discoverable credential (residentKey required).
  .post("/passkeys/registration/options", async (c) => {
    const user = await manager(c, { firstKeyAllowed: true });
    return c.json(optionsAnswer(c.var.deps, await addSecurityKey(c.var.deps, user.id, "required")));
  })
  .post("/passkeys/registration/verify", async (c) => {
    const user = await manager(c, { firstKeyAllowed: true });
    const credential = await responseOf<RegistrationResponseJSON>(c, registrationCredential);
    const added = await verifyAddSecurityKey(c.var.deps, user.id, { credential });
    const keys = await listSecurityKeys(c.var.deps.shards.ofUser(user.id), user.id);
    const key = keys.find((one) => one.id === added.id);
    return c.json(
      key ? passkeyItem(key) : { id: added.id, created_at: new Date(c.var.deps.now()).toISOString() },
    );
  })
  .get("/passkeys", async (c) => {
    const { user } = await signedIn(c);
    return c.json((await listSecurityKeys(c.var.deps.shards.ofUser(user.id), user.id)).map(passkeyItem));
  })
  .patch("/passkeys/:id", async (c) => {
    const { user } = await signedIn(c);
    const body = await bodyOf(c, renameBody);
    const name = body.friendly_name ?? "";
    if (name === "") throw new GoTrueError(400, "validation_failed", "friendly_name is required");
    if (new TextEncoder().encode(name).length > 120) {
      throw new GoTrueError(400, "validation_failed", "friendly_name must be 120 characters or less");
    }
    const renamed = await renameSecurityKey(
      c.var.deps.shards.ofUser(user.id),
      user.id,
      c.req.param("id"),
      name,
    );
    if (!renamed) throw PASSKEY_NOT_FOUND();
    return c.json(passkeyItem(renamed));
  })
  .delete("/passkeys/:id", async (c) => {
    const user = await manager(c, { firstKeyAllowed: false });
    const db = c.var.deps.shards.ofUser(user.id);
    if (!(await deleteSecurityKey(db, user.id, c.req.param("id"), c.var.deps.now())))
      throw PASSKEY_NOT_FOUND();
    return c.body(null, 204);
  })
  // auth.admin.passkey: the service role lists and removes any user's passkeys.
  .get("/admin/users/:id/passkeys", async (c) => {
    await requireServiceRole(c);
    const user = await userOf(c);
    return c.json((await listSecurityKeys(c.var.deps.shards.ofUser(user.id), user.id)).map(passkeyItem));
  })
  .delete("/admin/users/:id/passkeys/:passkey", async (c) => {
    await requireServiceRole(c);
    const user = await userOf(c);
    const id = c.req.param("passkey");
    if (!(await deleteSecurityKey(c.var.deps.shards.ofUser(user.id), user.id, id, c.var.deps.now()))) {
      throw PASSKEY_NOT_FOUND();
    }
    auditAdminAction(c, "security-key.delete", user.id, { keyId: id });
    return c.body(null, 204);
  });
