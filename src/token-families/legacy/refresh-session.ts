import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import type { RotateRequest } from "../session-families";

/**
 * The rotation object of refresh tokens from before families (legacy-rotation.ts): sessions
 * without a locator (`idFromName(sessionId)`) and OAuth2 tokens without their grant in them
 * (`idFromName("oauth2:<grantId>")`). A D1 index (`refresh_tokens`, `oauth2_refresh_tokens`) proves a presented hash
 * belongs to the family before this object is asked. Its successor is a token of the new kind, whose family the
 * caller starts in `SessionFamilies`: this object only ever serves a family's last legacy rotation (and duplicates
 * of it inside the grace window), then forgets it when it expires. Removable with the legacy paths
 * (docs/operations.md).
 *
 * State lives in the object's SQLite storage through the synchronous KV API: each method runs start to finish
 * without awaiting, so no two rotations interleave.
 */

interface FamilyState {
  current: string;
  previous: string | null;
  /** The successor of `previous`, sealed by the Worker, handed again to a duplicate refresh inside the window. */
  successorSealed: string | null;
  rotatedAt: number;
  revoked: boolean;
  /** When the newest token expires; the alarm forgets the family after this. */
  expiresAt: number;
}

export type RotateOutcome =
  /** `presented` was current: the candidate is now current. */
  | { outcome: "rotated" }
  /** `presented` was rotated less than the grace window ago: answer with the same successor. */
  | { outcome: "grace"; successorSealed: string }
  /** `presented` is an older token of this family: the family is now revoked (OAuth 2.0 BCP, RFC 9700 §4.14.2). */
  | { outcome: "replayed" }
  /** The family was revoked before (sign-out or an earlier replay). */
  | { outcome: "revoked" };

const STATE_KEY = "family";

export class RefreshSession extends DurableObject<Env> {
  rotate(request: RotateRequest): RotateOutcome {
    const { presentedHash, candidateHash, candidateSealed, now, graceMs, expiresAt } = request;
    const kv = this.ctx.storage.kv;
    // No state yet: the first rotation of a session. The D1 index holds exactly one token for a new session, so the
    // presented token is its first one.
    const stored = kv.get<FamilyState>(STATE_KEY);
    const state = stored ?? {
      current: presentedHash,
      previous: null,
      successorSealed: null,
      rotatedAt: 0,
      revoked: false,
      expiresAt,
    };
    if (state.revoked) return { outcome: "revoked" };

    if (presentedHash === state.current) {
      kv.put<FamilyState>(STATE_KEY, {
        current: candidateHash,
        previous: presentedHash,
        successorSealed: candidateSealed,
        rotatedAt: now,
        revoked: false,
        expiresAt,
      });
      // One alarm per family, armed at the first rotation; `alarm` re-arms it while the session slides forward.
      // Output gates hold the answer until the alarm is stored, so no await is needed here.
      if (!stored) void this.ctx.storage.setAlarm(expiresAt);
      return { outcome: "rotated" };
    }
    const inGrace = graceMs > 0 && now - state.rotatedAt <= graceMs;
    if (presentedHash === state.previous && state.successorSealed && inGrace) {
      return { outcome: "grace", successorSealed: state.successorSealed };
    }
    kv.put<FamilyState>(STATE_KEY, { ...state, successorSealed: null, revoked: true });
    return { outcome: "replayed" };
  }

  /**
   * Whether `hash` is the token that rotates next (introspection of an OAuth2 refresh token). Before the first
   * rotation the family has no state, and its one indexed token is current.
   */
  isCurrent(hash: string): boolean {
    const state = this.ctx.storage.kv.get<FamilyState>(STATE_KEY);
    return !state || (!state.revoked && state.current === hash);
  }

  /** Sign-out: no token of this family rotates again, even one whose D1 lookup raced the sign-out. */
  revoke(forgetAt: number): void {
    const kv = this.ctx.storage.kv;
    const state = kv.get<FamilyState>(STATE_KEY);
    kv.put<FamilyState>(STATE_KEY, {
      current: state?.current ?? "",
      previous: null,
      successorSealed: null,
      rotatedAt: state?.rotatedAt ?? 0,
      revoked: true,
      expiresAt: forgetAt,
    });
    if (!state) void this.ctx.storage.setAlarm(forgetAt);
  }

  /**
   * Once the newest token has expired, D1 no longer resolves any token of the family (lookups check expiry), so
   * the state can go. Until then the alarm moves to the current expiry.
   */
  override async alarm(): Promise<void> {
    const state = this.ctx.storage.kv.get<FamilyState>(STATE_KEY);
    if (state && state.expiresAt > Date.now()) await this.ctx.storage.setAlarm(state.expiresAt);
    else await this.ctx.storage.deleteAll();
  }
}
