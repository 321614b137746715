import { and, inArray, like, or } from "drizzle-orm";
import { oauth2Grants, personalAccessTokens, sessions, users } from "../db/schema";
import type { Deps } from "../http/deps";
import { IMPORTED_NHOST_METHOD, IMPORTED_SUPABASE_METHOD } from "./new-sessions";
import { revokeSession } from "./revocation";
import { METHODS_UNDER_SSO, PROVIDER_METHOD_PREFIX } from "./sso-enforcement";

/**
 * When an org starts enforcing SSO (or verifies one more domain while it does), the sessions its domains' users began
 * by a method enforced SSO refuses are ended: their rows and token families go, so the next refresh fails (the access
 * tokens already out expire as usual). Their personal access tokens go too: a PAT is a way in that outlives the IdP's
 * say-so (made before enforcement, it would sign in after it, and its sessions with it). So do the OAuth2 grants
 * those sessions gave third-party apps, `offline_access` ones included: an agent's refresh token from a password
 * session is the same way around the IdP (a session's end keeps offline grants, backchannel-fan-out.ts, because the
 * person meant them to outlive a sign-out; enforcement means no access not vouched by the IdP). Done once, at that moment,
 * in every shard, rather than checked on every refresh. Sessions an IdP vouched for stay. Bounded per call
 * (`MAX_USERS` per domain and shard); docs/sso.md.
 */

const MAX_USERS = 5_000;
const CHUNK = 50;

export async function endSessionsUnderSso(deps: Deps, domains: readonly string[]): Promise<number> {
  let ended = 0;
  // A TOTP step's session may have begun at the IdP or with a password: ended all the same (signing in again through
  // the IdP is what enforcement asks). So is an app's session from the hosted pages, whatever signed the pages in,
  // and a session carried from Nhost, which no IdP here vouched for:
  // its row's end takes its Nhost refresh tokens with it, carried yet or not.
  const methods = [
    ...METHODS_UNDER_SSO,
    // Every second factor's session, as the TOTP one: a step-up proves the factor, not the IdP's say-so.
    "mfa-totp",
    "mfa-sms",
    "mfa-webauthn",
    "mfa-email",
    "mfa-passkey",
    "hosted-page",
    IMPORTED_NHOST_METHOD,
    IMPORTED_SUPABASE_METHOD,
  ];
  for (const domain of domains) {
    // Domains are [a-z0-9.-] only (src/sso/domains.ts), so nothing in them is a LIKE wildcard.
    for (const db of deps.shards.all) {
      const members = await db
        .select({ id: users.id })
        .from(users)
        .where(like(users.email, `%@${domain}`))
        .limit(MAX_USERS)
        .all();
      for (let at = 0; at < members.length; at += CHUNK) {
        const ids = members.slice(at, at + CHUNK).map((member) => member.id);
        // The PATs first: one of them could otherwise make a session between the two steps.
        await db.delete(personalAccessTokens).where(inArray(personalAccessTokens.userId, ids)).run();
        const doomed = await db
          .select({ id: sessions.id })
          .from(sessions)
          .where(
            and(
              inArray(sessions.userId, ids),
              or(inArray(sessions.method, methods), like(sessions.method, `${PROVIDER_METHOD_PREFIX}%`)),
            ),
          )
          .all();
        for (let from = 0; from < doomed.length; from += CHUNK) {
          const sids = doomed.slice(from, from + CHUNK).map((session) => session.id);
          await db
            .delete(oauth2Grants)
            .where(and(inArray(oauth2Grants.userId, ids), inArray(oauth2Grants.sid, sids)))
            .run();
        }
        for (const session of doomed) await revokeSession(deps, session.id);
        ended += doomed.length;
      }
    }
  }
  return ended;
}
