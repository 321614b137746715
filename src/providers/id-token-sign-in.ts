import { beginSignIn, type SignInResult, type SignInScope, type SignUpOptions, startSession } from "../auth";
import { AppError } from "../errors";
import { userForProfile } from "./accounts";
import type { IdTokenProvider } from "./config";
import { profileFromIdToken } from "./id-tokens";

/**
 * A sign-in by a native app's Apple or Google ID token (contract §3.2): the Nhost API's `/signin/idtoken` and the
 * Supabase face's `grant_type=id_token` both end here, with the same user resolution as the redirect flow.
 */
export async function signInByIdToken(
  scope: SignInScope,
  body: { provider: IdTokenProvider; idToken: string; nonce?: string; options?: SignUpOptions },
): Promise<SignInResult> {
  const { deps } = scope;
  const profile = await profileFromIdToken(deps, body.provider, body.idToken, body.nonce);
  // Enforced SSO: refused before an account is made or linked for the address (as the redirect flow, flow.ts).
  await beginSignIn(scope, { method: "id-token", email: profile.email });
  const user = await userForProfile(deps, body.provider, profile, body.options ?? {}, "id-token");
  if (user.disabled) throw new AppError("disabled-user");
  return startSession(scope, { user, mfaGate: true });
}
