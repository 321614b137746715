import { IMPORTED_SUPABASE_METHOD } from "../auth";
import { sha256Hex } from "../lib/crypto";
import type { RowReason, SupabaseSession } from "./wire";

/**
 * GoTrue's sessions, each reduced to the one refresh token GoTrue would honour now (supabase.md §5), as the Nhost
 * import's tokens are: a session row known by that token's SHA-256, which the legacy drawer (src/token-families/
 * legacy/) rotates once into a family of the service's own. So token-writes.ts, the ledger, its tombstones and the
 * delta-run rules serve both systems unchanged.
 *
 * Which token is live (GoTrue's internal/tokens/service.go, internal/crypto/refresh_tokens.go, read at bc32168):
 * - a session with `refresh_token_hmac_key` and `refresh_token_counter` is on v2 tokens: its live token is the one
 *   encoded for that counter (`0x00 ‖ session id ‖ uvarint(counter) ‖ HMAC-SHA-256(key, those)[:16] ‖
 *   SHA-256(those)[:4]`, base64url without padding). It is derived here, its hash kept, the key dropped: the service
 *   never mints GoTrue tokens, so keeping the key would only keep a way to forge every later counter.
 * - otherwise its live token is its unrevoked 12-character token of highest id (`FindCurrentlyActiveRefreshToken`);
 *   a revoked one, or an older unrevoked one, is not carried (only one token per session rotates in the drawer).
 * A session GoTrue itself no longer honours (`not_after` past) is left out with a warning, as an expired Nhost token.
 * A session at `aal2` is carried as a session whose second factor is not pending; its `aal` claim here reads `aal1`
 * (the face derives `aal` from how a session began, docs/decisions.md).
 */

const DAY_MS = 86_400_000;

/** A session's token as user-checks.ts's `ImportedToken` (structurally: that file imports this one). */
interface CarriedToken {
  id: string;
  kind: "regular";
  hash: string;
  createdAt: number;
  expiresAt: number;
  metadata: Record<string, unknown>;
  method: string;
  secondFactorPending: boolean;
}

function base64urlDecode(text: string): Uint8Array | null {
  // No base64 ends with a lone character; workerd's atob lets it pass.
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

function base64urlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function uvarint(value: number): number[] {
  const out: number[] = [];
  let rest = BigInt(value);
  while (rest >= 0x80n) {
    out.push(Number((rest & 0x7fn) | 0x80n));
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
}

const uuidBytes = (id: string) => Uint8Array.from(id.replace(/-/g, "").match(/../g)!, (h) => parseInt(h, 16));

/** GoTrue's v2 refresh token for `sessionId` at `counter` (crypto.RefreshToken.Encode). */
export async function goTrueV2Token(key: Uint8Array, sessionId: string, counter: number): Promise<string> {
  const body = new Uint8Array([0, ...uuidBytes(sessionId), ...uvarint(counter)]);
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, body)).slice(0, 16);
  const signed = new Uint8Array([...body, ...signature]);
  const checksum = new Uint8Array(await crypto.subtle.digest("SHA-256", signed)).slice(0, 4);
  return base64urlEncode(new Uint8Array([...signed, ...checksum]));
}

const idOrder = (id: string | number) => BigInt(id);

/**
 * The sessions' live tokens as imported tokens (`kind: "regular"`, the session's id), and what was left out and why.
 * `lifetimeMs` bounds a session GoTrue let run without `not_after`: from its live token's issue, as a refresh token of
 * the service's own would be.
 */
export async function supabaseSessionTokens(
  sessions: SupabaseSession[],
  now: number,
  lifetimeMs: number,
  warn: (warning: RowReason & { notCarried: boolean }) => void,
  refuse: (table: string, id: string, reason: string) => void,
  /** The user has a second factor: a session GoTrue held at `aal1` (or older, with no `aal`) has not shown it. */
  secondFactor = false,
): Promise<CarriedToken[]> {
  const tokens: CarriedToken[] = [];
  for (const session of sessions) {
    const id = session.id.toLowerCase();
    const notAfter = session.notAfter ? Date.parse(session.notAfter) : null;
    if (notAfter !== null && notAfter <= now) {
      warn({ table: "auth.sessions", id, reason: "not_after is past: not needed", notCarried: false });
      continue;
    }
    let hash: string;
    let issuedAt: number;
    if (session.refreshTokenHmacKey !== null && session.refreshTokenCounter !== null) {
      const key = base64urlDecode(session.refreshTokenHmacKey);
      if (!key || key.length < 16) {
        refuse(
          "auth.sessions",
          id,
          "refresh_token_hmac_key is not a base64url key (open it with the DB key)",
        );
        continue;
      }
      hash = await sha256Hex(await goTrueV2Token(key, id, session.refreshTokenCounter));
      const newest = session.refreshTokens.reduce((at, t) => Math.max(at, Date.parse(t.createdAt)), 0);
      const refreshed = session.refreshedAt ? Date.parse(session.refreshedAt) : 0;
      issuedAt = Math.max(newest, refreshed, Date.parse(session.createdAt));
    } else {
      const live = session.refreshTokens
        .filter((t) => !t.revoked)
        .sort((a, b) => (idOrder(b.id) > idOrder(a.id) ? 1 : idOrder(b.id) < idOrder(a.id) ? -1 : 0))[0];
      if (!live) {
        warn({
          table: "auth.sessions",
          id,
          reason: "no unrevoked refresh token: signed out",
          notCarried: false,
        });
        continue;
      }
      hash = live.tokenHash.toLowerCase();
      issuedAt = Date.parse(live.createdAt);
    }
    // Sliding like the service's own: a session refreshed within the lifetime lives on; one idle longer is over.
    const expiresAt = Math.min(notAfter ?? Number.POSITIVE_INFINITY, issuedAt + lifetimeMs);
    if (expiresAt <= now) {
      const reason = `unused for over ${Math.round(lifetimeMs / DAY_MS)} days: not needed`;
      warn({ table: "auth.sessions", id, reason, notCarried: false });
      continue;
    }
    tokens.push({
      id,
      kind: "regular",
      hash,
      createdAt: Date.parse(session.createdAt),
      expiresAt,
      metadata: {},
      method: IMPORTED_SUPABASE_METHOD,
      // As a session of this face signed in with the password only: GoTrue's aal1, stepped up by mfa.verify, and
      // without Hasura claims until then (the face's rule, docs/decisions.md "Issue 43: MFA").
      secondFactorPending: secondFactor && session.aal !== "aal2" && session.aal !== "aal3",
    });
  }
  return tokens;
}
