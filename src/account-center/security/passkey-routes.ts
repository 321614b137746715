import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import {
  addSecurityKey,
  deleteSecurityKey,
  registrationCredential,
  userHasSecurityKey,
  verifyAddSecurityKey,
} from "../../auth";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { backToAccount, type Ctx, field, type Posted, type Signed } from "../forms";
import { PASSKEY_CREATE_SCRIPT } from "./passkey-script";
import { addBody, PASSKEYS } from "./passkeys";
import { attempt, confirmedPost, idOf, securityStep } from "./steps";

/**
 * The passkeys section's form posts, through the API's own functions (src/auth/webauthn: the same ceremony, the
 * same single-use challenge bound to this user, the same audit event). Adding and removing are what the API marks
 * elevated (contract §6): the confirmation they need is `elevated` here, so under `AUTH_REQUIRE_ELEVATED_CLAIM` it
 * takes a passkey, and a first key needs none (the API's `firstKeyAllowed`).
 * Threats: a cross-site post adding the attacker's key to the account or removing the owner's (forms.ts refuses it);
 * a borrowed, signed-in browser doing so (a recent confirmation first, at both steps of adding); a credential made
 * for another user's challenge (the API refuses a challenge issued to someone else); removing another user's key by
 * its id (the delete is scoped to the signed-in user: "gone", nothing removed).
 */

/** A first key needs no elevation, as with the API's `POST /user/webauthn/add` (`firstKeyAllowed`). */
const addOptions = (c: Ctx) => async (posted: Posted) => {
  const userId = posted.session.user.id;
  return { elevated: await userHasSecurityKey(c.var.deps.shards.ofUser(userId), userId) };
};

/** The browser's `credential.toJSON()`, as the API's `/user/webauthn/verify` takes it; null when it is not that. */
function credentialOf(params: URLSearchParams): RegistrationResponseJSON | null {
  const text = field(params, "credential", 65_536);
  try {
    const parsed = registrationCredential.safeParse(JSON.parse(text));
    // zod checked the shape; the library checks everything inside (as the API's route does).
    return parsed.success ? (parsed.data as unknown as RegistrationResponseJSON) : null;
  } catch {
    return null;
  }
}

/** The creation step, with fresh options (a new single-use challenge for this user). */
async function addStep(c: Ctx, signed: Signed, error?: string) {
  const options = await addSecurityKey(c.var.deps, signed.session.user.id);
  const w = signed.catalogue.accountSecurity.passkeys;
  return securityStep(c, signed, {
    title: w.addTitle,
    body: addBody(c, signed, options, error),
    script: PASSKEY_CREATE_SCRIPT,
    ...(error ? { status: 400 as const } : {}),
  });
}

export const passkeyRoutes = new Hono<AppEnv>()
  .post("/security/passkeys/add", async (c) => {
    const posted = await confirmedPost(c, PASSKEYS, addOptions(c));
    if ("answer" in posted) return posted.answer;
    if (!c.var.config.webauthn.enabled) return backToAccount(c, PASSKEYS, "security-unavailable");
    return addStep(c, posted);
  })
  .post("/security/passkeys/verify", async (c) => {
    const posted = await confirmedPost(c, PASSKEYS, addOptions(c));
    if ("answer" in posted) return posted.answer;
    const userId = posted.session.user.id;
    if (!c.var.config.webauthn.enabled) return backToAccount(c, PASSKEYS, "security-unavailable");
    const w = posted.catalogue.accountSecurity.passkeys;
    const credential = credentialOf(posted.params);
    if (!credential) return addStep(c, posted, w.problem);
    const nickname = field(posted.params, "nickname", 60) || undefined;
    const result = await attempt(
      posted,
      () => verifyAddSecurityKey(c.var.deps, userId, { credential, nickname }),
      () => addStep(c, posted, w.problem),
      // A ceremony that did not verify (an unknown, used or someone else's challenge; a bad attestation).
      (error) => (error instanceof AppError && error.code === "invalid-request" ? w.problem : undefined),
    );
    if ("answer" in result) return result.answer;
    return backToAccount(c, PASSKEYS, "security-passkey-added");
  })
  .post("/security/passkeys/remove", async (c) => {
    const posted = await confirmedPost(c, PASSKEYS, { elevated: true });
    if ("answer" in posted) return posted.answer;
    const userId = posted.session.user.id;
    const id = idOf(posted.params);
    const removed = id !== "" && (await deleteSecurityKey(c.var.deps.shards.ofUser(userId), userId, id));
    return backToAccount(c, PASSKEYS, removed ? "security-passkey-removed" : "security-gone");
  });
