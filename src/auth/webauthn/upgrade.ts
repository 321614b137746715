import { and, eq, isNull } from "drizzle-orm";
import { securityKeys, sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { impersonationRefusal } from "../../http/impersonation";

/**
 * A passkey upgrade (docs/passkeys.md): right after a first-factor sign-in, the browser's password manager makes a
 * passkey without asking (`mediation: "conditional"` on `navigator.credentials.create`, WebAuthn L3 §5.1.3, client
 * capability `conditionalCreate`), and the app registers it with `POST /user/webauthn/add {upgrade:true}`. No
 * gesture happens, so the authenticator may report user presence 0: what keeps that safe is everything here.
 *
 * - Only a session that began with a first factor the password manager stands in for (a password, a mailed link, a
 *   code; the TOTP and SMS steps after one), never a passkey's, a provider's, a PAT's or an impersonation's.
 * - Only within five minutes of that sign-in: an access token stolen later cannot plant a key.
 * - Once per session (the key records its session, unique): a stolen token within the window plants one key at
 *   most, and the user is mailed about it.
 * - The key is not phishing-resistant until it is used with user verification (authentication.ts): it proves no
 *   more than the sign-in it was made in.
 */

export const UPGRADE_WINDOW_MS = 5 * 60 * 1000;

/** Session methods (sign-in/method.ts) after which an upgrade is allowed. */
const FIRST_FACTOR_METHODS = new Set([
  "email-password",
  "email-link",
  "pkce-link",
  "email-otp",
  "sms-otp",
  // The second step of a sign-in whose first step was one of the above (its ticket came from it).
  "mfa-totp",
  "mfa-sms",
]);

/** An upgrade refused: 403 `forbidden`, naming the rule (contract §3, the catalogue's shape). */
const refused = (why: string) => new AppError("forbidden", `passkey upgrade refused: ${why}`);

/**
 * Who asks for an upgrade: the session (the API's access token's `sid`, the page's cookie's session), and, from the
 * built-in pages, when their cookie says a first factor was performed (its MAC vouches for it; the page's session
 * row is the page's own, `oauth2-page`, which names no first factor). Without it the session row's method and
 * creation time say.
 */
export interface UpgradeClaim {
  sessionId: string | undefined;
  firstFactorAt?: number;
}

/** Checks that the caller's session may make its upgrade passkey now; returns the session id the key will record. */
export async function upgradeAllowed(deps: Deps, userId: string, claim: UpgradeClaim): Promise<string> {
  const { sessionId } = claim;
  if (!sessionId) throw refused("the access token names no session");
  const db = deps.shards.ofUser(userId);
  const [session, made] = await Promise.all([
    db
      .select({ createdAt: sessions.createdAt, method: sessions.method, actor: sessions.actor })
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
      .get(),
    db
      .select({ id: securityKeys.id })
      .from(securityKeys)
      .where(eq(securityKeys.upgradeSessionId, sessionId))
      .get(),
  ]);
  if (!session) throw refused("the session has ended");
  if (session.actor) throw impersonationRefusal("a passkey upgrade");
  const firstFactorAt =
    claim.firstFactorAt ?? (FIRST_FACTOR_METHODS.has(session.method ?? "") ? session.createdAt : undefined);
  if (firstFactorAt === undefined) {
    throw refused("the session did not begin with a password, a link or a code");
  }
  if (deps.now() - firstFactorAt > UPGRADE_WINDOW_MS) {
    throw refused("more than 5 minutes after the sign-in");
  }
  if (made) throw refused("this session already made its passkey");
  return sessionId;
}

/** The unique index said a second upgrade key of one session lost the race. */
export const upgradeAlreadyMade = () => refused("this session already made its passkey");

/**
 * Whether an assertion by `key` is phishing-resistant (`phr`): every key is, except an upgrade's until its first
 * assertion with user verification, which this records (conditionally: two racing assertions record one time).
 */
export async function phishingResistantUse(
  deps: Deps,
  key: { id: string; userId: string; upgradeSessionId: string | null; userVerifiedAt: number | null },
  userVerified: boolean,
): Promise<boolean> {
  if (key.upgradeSessionId === null || key.userVerifiedAt !== null) return true;
  if (!userVerified) return false;
  await deps.shards
    .ofUser(key.userId)
    .update(securityKeys)
    .set({ userVerifiedAt: deps.now() })
    .where(and(eq(securityKeys.id, key.id), isNull(securityKeys.userVerifiedAt)))
    .run();
  return true;
}
