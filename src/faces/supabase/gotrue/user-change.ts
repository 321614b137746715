import type { Context } from "hono";
import {
  changeUserEmail,
  checkReauthenticationCode,
  requestPhoneChange as requestNumberChange,
  userHasSecurityKey,
} from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import type { Deps } from "../../../http/deps";
import { GoTrueError } from "./errors";
import { allowedRedirect, goTrueLinkForm } from "./mail-links";
import { e164 } from "./phone";

/**
 * `updateUser`'s sensitive changes (contract supabase.md §2): an email or phone change, and the proof they and a
 * password change need. The Nhost face asks for an elevated token (a security key) under `AUTH_REQUIRE_ELEVATED_CLAIM`; this
 * face asks, in the same cases, for GoTrue's `nonce`: the code `reauthenticate` sent to the account's own verified
 * address or number (src/auth/links/reauthentication.ts).
 */

/** Whether a sensitive change needs the proof: `required` for everyone, `recommended` for users with a key. */
export async function proofNeeded(deps: Deps, userId: string): Promise<boolean> {
  const mode = deps.config.elevation;
  if (mode === "required") return true;
  return mode === "recommended" && (await userHasSecurityKey(deps.shards.ofUser(userId), userId));
}

/** The reauthentication code, spent; a wrong, used or expired one is GoTrue's 422 `reauthentication_not_valid`. */
export async function proveNonce(deps: Deps, userId: string, nonce: string): Promise<void> {
  try {
    await checkReauthenticationCode(deps, userId, nonce);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid-otp") {
      throw new GoTrueError(422, "reauthentication_not_valid", "Nonce has expired or is invalid");
    }
    throw error;
  }
}

/**
 * The core's email change: the new address gets a mail with GoTrue's link and code (type `email_change`), and the
 * address changes when either is used (`verifyOtp({email: <new>, token, type: 'email_change'})`), as GoTrue's
 * change without `SECURE_EMAIL_CHANGE_ENABLED` does. Anonymous users keep their way (`forbidden-anonymous`).
 */
export async function requestEmailChange(
  c: Context<AppEnv>,
  user: { id: string; isAnonymous: boolean },
  email: string,
): Promise<string> {
  const { deps, config } = c.var;
  if (user.isAnonymous) throw new AppError("forbidden-anonymous");
  await changeUserEmail(deps, user.id, email, {
    redirectTo: allowedRedirect(config, c.req.query("redirect_to")),
    form: goTrueLinkForm(config),
  });
  return email.toLowerCase();
}

/**
 * The core's phone change: a code texted to the new number, which becomes the account's when
 * `verifyOtp({phone: <new>, token, type: 'phone_change'})` brings it back. Anonymous users keep their way.
 */
export async function requestPhoneChange(
  c: Context<AppEnv>,
  user: { id: string; isAnonymous: boolean },
  phone: string,
): Promise<string> {
  if (user.isAnonymous) throw new AppError("forbidden-anonymous");
  return requestNumberChange(c.var.deps, user.id, e164(phone));
}

/** GoTrue's user fields of a pending email change. */
export const emailChangePending = (email: string, now: number) => ({
  new_email: email,
  email_change_sent_at: new Date(now).toISOString(),
});
