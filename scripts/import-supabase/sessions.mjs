// GoTrue's sessions and refresh tokens (auth.sessions, auth.refresh_tokens) → the wire's `supabaseSessions`
// (src/move-in/wire.ts `supabaseSessionSchema`), read for a page of users in one query each. The service decides what
// it carries (src/move-in/supabase-sessions.ts): here the rows are read, the sealed HMAC keys opened and the tokens
// hashed, so that no refresh token and no sealed key ever crosses the wire. docs/supabase-sessions-import.md.
import { createHash } from "node:crypto";
import { openEncryptedString } from "./factor-secrets.mjs";

/**
 * A page of users' sessions with their refresh tokens: `{sessions, tokens}` rows. Only the session's newest unrevoked
 * token is read (`DISTINCT ON`), with its `parent`: GoTrue honours no other (`FindCurrentlyActiveRefreshToken`, and
 * the parent as a retry), and a long-lived session has thousands of rotated-out rows. Columns missing in older GoTrue versions are read as NULL; a database
 * from before GoTrue had sessions (2022) has none to carry.
 */
export async function readSessions(db, userIds) {
  if (!db.has("auth.sessions") || !db.hasColumn("auth.refresh_tokens", "session_id"))
    return { sessions: [], tokens: [] };
  const col = (name, expression = `"${name}"`) =>
    db.hasColumn("auth.sessions", name) ? `${expression} AS ${name}` : `NULL AS ${name}`;
  // GoTrue's amr (models.Session.CalculateAALAndAMR): one row per method and session, its time the method's last use.
  const amr = db.has("auth.mfa_amr_claims")
    ? `COALESCE((SELECT json_agg(json_build_object('method', c.authentication_method, 'at', c.updated_at)
         ORDER BY c.updated_at DESC) FROM auth.mfa_amr_claims c WHERE c.session_id = s.id), '[]'::json) AS amr`
    : "NULL AS amr";
  const sessions = await db.query(
    `SELECT id::text AS id, user_id::text AS user_id, created_at, ${col("not_after")}, ${amr},
       ${col("aal", "aal::text")}, ${col("factor_id", "factor_id::text")},
       ${col("refreshed_at", "refreshed_at AT TIME ZONE 'UTC'")},
       ${col("refresh_token_hmac_key")}, ${col("refresh_token_counter", "refresh_token_counter::text")}
     FROM auth.sessions s WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
    [userIds],
  );
  if (sessions.length === 0) return { sessions, tokens: [] };
  const tokens = await db.query(
    `SELECT DISTINCT ON (session_id) id::text AS id, session_id::text AS session_id, token, created_at,
       ${db.hasColumn("auth.refresh_tokens", "parent") ? "parent" : "NULL AS parent"}
     FROM auth.refresh_tokens
     WHERE session_id = ANY($1::uuid[]) AND revoked IS NOT TRUE
     ORDER BY session_id, id DESC`,
    [sessions.map((s) => s.id)],
  );
  return { sessions, tokens };
}

const iso = (value) => (value === null || value === undefined ? null : new Date(value).toISOString());
const AAL = new Set(["aal1", "aal2", "aal3"]);

/**
 * One user's sessions for the wire, with what could not be sent: `{sessions, notCarried}`. `keys`: SUPABASE_ENCRYPTION_KEY's
 * map or null. A session whose HMAC key can't be opened is not sent (its user signs in again) and is listed.
 */
export function supabaseSessionsOf(sessions, tokens, keys) {
  const bySession = new Map(tokens.map((t) => [t.session_id, t]));
  const out = [];
  const notCarried = [];
  for (const session of sessions) {
    const token = bySession.get(session.id);
    let hmacKey = session.refresh_token_hmac_key ?? null;
    const counter = session.refresh_token_counter;
    if (hmacKey !== null && counter !== null) {
      // GoTrue's models.Session.GetRefreshTokenHmacKey: the key's base64url text, plain or as crypto.EncryptedString
      // sealed with the session's id as the HKDF info.
      if (hmacKey.startsWith("{")) {
        const opened = openEncryptedString(hmacKey, session.id, keys);
        if (opened.why) {
          notCarried.push({
            table: "auth.sessions",
            id: session.id,
            reason: `refresh_token_hmac_key ${opened.why}: this session signs in again`,
          });
          continue;
        }
        hmacKey = opened.plain;
      }
      hmacKey = hmacKey.replace(/=+$/, "");
    } else hmacKey = null;
    out.push({
      id: session.id,
      createdAt: iso(session.created_at),
      notAfter: iso(session.not_after),
      refreshedAt: iso(session.refreshed_at),
      aal: AAL.has(session.aal) ? session.aal : null,
      factorId: session.factor_id ?? null,
      // null: a GoTrue from before mfa_amr_claims (the service then goes by `aal` alone).
      amr: Array.isArray(session.amr)
        ? session.amr
            .filter((claim) => typeof claim?.method === "string" && claim.at)
            .map((claim) => ({ method: claim.method, at: iso(claim.at) }))
        : null,
      refreshTokenHmacKey: hmacKey,
      refreshTokenCounter: hmacKey === null ? null : Number(counter),
      // The token's SHA-256, never the token (the service keeps hashes only, docs/supabase-sessions-import.md).
      refreshTokens: token?.token
        ? [
            {
              id: token.id,
              tokenHash: createHash("sha256").update(token.token).digest("hex"),
              revoked: false,
              createdAt: iso(token.created_at) ?? iso(session.created_at),
              // GoTrue's retry allowance (models.RefreshToken.Parent): hashed like the token, never sent itself.
              parentHash: token.parent ? createHash("sha256").update(token.parent).digest("hex") : null,
            },
          ]
        : [],
    });
  }
  return { sessions: out, notCarried };
}
