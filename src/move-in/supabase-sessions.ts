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
 *   a revoked one, or an older unrevoked one, is not carried.
 * The token before the live one (the v1 `parent`, the v2 counter - 1), which GoTrue takes at any time as a lost
 * answer's retry, is carried as a `retryHashes` entry: indexed beside the live one, whichever comes first moves the
 * session here and the other is then a used token of the family (docs/decisions.md, "Issue 44: what the Supabase
 * import no longer loses").
 * A session GoTrue itself no longer honours (`not_after` past) is left out with a warning, as an expired Nhost token.
 * A session that showed a second factor at Supabase (an `mfa_amr_claims` row of `totp`, `mfa/phone` or `mfa/webauthn`,
 * which is how GoTrue's CalculateAALAndAMR gives `aal2` at every refresh) is carried as a session begun by that factor
 * when it last showed it: its method `mfa-totp`, `mfa-sms` or `mfa-webauthn`, the same row mfa.verify's step-up makes
 * (src/auth/mfa/step-up.ts), so the face's token says `aal2` with that `amr` entry and the Nhost face sees a second
 * factor's session. Without amr rows (GoTrue before them) `aal2` alone keeps it from being pending, as before.
 */

const DAY_MS = 86_400_000;

/** GoTrue's second-factor amr methods (models.AMRClaim.IsAAL2Claim) → the session method of that step-up here. */
const SECOND_FACTOR_METHOD: Record<string, string> = {
  totp: "mfa-totp",
  "mfa/phone": "mfa-sms",
  "mfa/webauthn": "mfa-webauthn",
};

/** The session's newest second-factor claim, as this service's method and time; null if it showed none. */
function secondFactorOf(session: SupabaseSession): { method: string; at: number } | null {
  let newest: { method: string; at: number } | null = null;
  for (const claim of session.amr ?? []) {
    const method = SECOND_FACTOR_METHOD[claim.method];
    const at = Date.parse(claim.at);
    if (method && (!newest || at > newest.at)) newest = { method, at };
  }
  return newest;
}

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
  retryHashes: string[];
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
    let retryHashes: string[] = [];
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
      // GoTrue takes the token one counter behind at any time ("likelyNotSavedByClient"): a client whose last answer
      // was lost. Only its hash is kept, like the live one's.
      if (session.refreshTokenCounter > 0)
        retryHashes = [await sha256Hex(await goTrueV2Token(key, id, session.refreshTokenCounter - 1))];
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
      // GoTrue takes the live token's parent at any time, answering with the live one (a lost answer's retry).
      if (live.parentHash && live.parentHash.toLowerCase() !== hash)
        retryHashes = [live.parentHash.toLowerCase()];
    }
    // Sliding like the service's own: a session refreshed within the lifetime lives on; one idle longer is over.
    const expiresAt = Math.min(notAfter ?? Number.POSITIVE_INFINITY, issuedAt + lifetimeMs);
    if (expiresAt <= now) {
      const reason = `unused for over ${Math.round(lifetimeMs / DAY_MS)} days: not needed`;
      warn({ table: "auth.sessions", id, reason, notCarried: false });
      continue;
    }
    const shown = secondFactorOf(session);
    const aal2 = session.amr === null ? session.aal === "aal2" || session.aal === "aal3" : shown !== null;
    tokens.push({
      id,
      kind: "regular",
      hash,
      // A stepped-up session begins here at its second factor, as mfa.verify's does: the `amr` entry's time.
      createdAt: shown?.at ?? Date.parse(session.createdAt),
      expiresAt,
      metadata: {},
      method: shown?.method ?? IMPORTED_SUPABASE_METHOD,
      // As a session of this face signed in with the password only: GoTrue's aal1, stepped up by mfa.verify, and
      // without Hasura claims until then (the face's rule, docs/decisions.md "Issue 43: MFA").
      secondFactorPending: secondFactor && !aal2,
      retryHashes,
    });
  }
  return tokens;
}
