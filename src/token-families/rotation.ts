import type { Deps } from "../http/deps";
import { decrypt, encrypt, randomUuid, sha256Hex } from "../lib/crypto";
import type { RotateRequest } from "./session-families";

/**
 * Refresh-token rotation, the one implementation behind sessions (`POST /token`) and OAuth2 grants
 * (`grant_type=refresh_token`): contract §5.2's single use, the same successor to a duplicate inside the grace window,
 * and a replay after it ending the whole family (RFC 9700 §4.14.2).
 *
 * A family (a session, a grant) lives in the `SessionFamilies` object its tokens name: every token carries six hex
 * digits, its locator, so a rotation needs no lookup to find its object. The object knows every token hash it handed
 * out until the family expires, so a made-up token is merely unknown: it revokes nothing. D1 is not written; the
 * object says when the family's last-used time in D1 is due (`touch`).
 *
 * Tokens from before families (sessions without a locator, OAuth2 tokens without a grant in them) are the drawer
 * `legacy/`'s business, which nothing here imports: it goes in one move on the date docs/operations.md gives.
 */

export const newLocator = (): string => randomUuid().slice(0, 6);

/** How stale a family's last-used time (and sliding expiry) in D1 may get: hourly, sooner for short lifetimes. */
const touchEveryMs = (lifetimeMs: number) => Math.min(3_600_000, lifetimeMs / 2);

const familiesAt = (deps: Deps, locator: string) =>
  deps.env.SESSION_FAMILIES.get(deps.env.SESSION_FAMILIES.idFromName(`families:${locator}`));

export type Rotation =
  /**
   * `token` is the successor handed out; `touch`: the family's last-used time in D1 is due; `bookmark`: how fresh
   * the family's D1 reads must be (its user's own writes, `raiseFamilyBookmark`), null when any replica will do.
   */
  | {
      outcome: "rotated";
      family: string;
      token: string;
      touch: boolean;
      bookmark?: string | null;
      /** The DPoP key the family is bound to now (null: none); `bound`: this rotation bound it. */
      jkt?: string | null;
      bound?: boolean;
      /** The org the family acts in, when its object holds it (family-orgs.ts); absent: the session's row says. */
      org?: string | null;
      /** This rotation recorded the request's `switchTo`: `undoOrgSwitch` puts it back. */
      switched?: boolean;
    }
  /** A duplicate inside the grace window: `token` is the successor the first request got. */
  | {
      outcome: "grace";
      family: string;
      token: string;
      bookmark?: string | null;
      jkt?: string | null;
      org?: string | null;
    }
  /** The family is bound to a DPoP key this request did not prove: nothing was spent. */
  | { outcome: "key-mismatch"; family: string }
  /** An older token of the family (now revoked), or a family revoked before. */
  | { outcome: "replayed" | "revoked"; family: string }
  /** Never handed out by this object (or forgotten after the family expired). */
  | { outcome: "unknown" };

export interface RotationRequest {
  presented: string;
  /** The token that becomes current if `presented` is. */
  successor: string;
  /** The family's lifetime from now (it slides with each rotation). */
  lifetimeMs: number;
  /** `0` when a token must be spent exactly once (the OAuth2 page's magic-link landing). */
  graceMs: number;
  /**
   * Sessions only: the thumbprint of the DPoP key the request proved. A bound family rotates only with its key; an
   * unbound one is bound by the first rotation with one. OAuth2 grants pass none (they check their key on the grant).
   */
  dpopJkt?: string | null;
  /**
   * Sessions only: a switch into an organization (null: out of any), recorded in the rotation's own run while the
   * caller reads the membership beside it (src/auth/sessions/session-org.ts); a refusal calls `undoOrgSwitch`.
   */
  switchTo?: { org: string | null };
}

/**
 * A rotation as the objects take it: hashes only, and the successor sealed for a duplicate inside the grace window
 * (the legacy drawer's `RefreshSession` takes the same).
 */
export async function objectRequest(deps: Deps, request: RotationRequest): Promise<RotateRequest> {
  const now = deps.now();
  const [presentedHash, candidateHash, candidateSealed] = await Promise.all([
    sha256Hex(request.presented),
    sha256Hex(request.successor),
    encrypt(deps.config.secrets.encryptionKey, request.successor),
  ]);
  return {
    presentedHash,
    candidateHash,
    candidateSealed,
    now,
    graceMs: request.graceMs,
    expiresAt: now + request.lifetimeMs,
    ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
  };
}

export async function rotateInFamily(
  deps: Deps,
  locator: string,
  request: RotationRequest,
): Promise<Rotation> {
  const result = await familiesAt(deps, locator).rotate({
    ...(await objectRequest(deps, request)),
    touchEveryMs: touchEveryMs(request.lifetimeMs),
    ...(request.switchTo ? { switchTo: request.switchTo } : {}),
  });
  switch (result.outcome) {
    case "rotated":
      return {
        outcome: "rotated",
        family: result.family,
        token: request.successor,
        touch: result.touch,
        bookmark: result.bookmark,
        jkt: result.jkt ?? null,
        bound: result.bound ?? false,
        ...(result.org !== undefined ? { org: result.org } : {}),
        ...(result.switched ? { switched: true } : {}),
      };
    case "grace":
      return {
        outcome: "grace",
        family: result.family,
        token: await decrypt(deps.config.secrets.encryptionKey, result.successorSealed),
        bookmark: result.bookmark,
        jkt: result.jkt ?? null,
        ...(result.org !== undefined ? { org: result.org } : {}),
      };
    default:
      return result;
  }
}

/** The family's next refreshes read D1 at least as fresh as `bookmark` (a write its user made and reads back). */
export function raiseFamilyBookmark(
  deps: Deps,
  locator: string,
  family: string,
  bookmark: string,
): Promise<void> {
  return familiesAt(deps, locator).raiseBookmark(family, bookmark);
}

/**
 * A switch the caller refused after its rotation recorded it (`switchTo`): the family's org goes back, and the
 * rotation too when nothing happened to the family since. True: `successor` is forgotten and the presented token is
 * current again (unspent); false: it stays spent (a duplicate inside the grace window got the successor, a sign-out).
 */
export async function undoOrgSwitch(
  deps: Deps,
  locator: string,
  family: string,
  successor: string,
): Promise<boolean> {
  return familiesAt(deps, locator).undoSwitch(family, await sha256Hex(successor));
}

/** The family acts in `org` from now on (a switch its rotation did not record: a duplicate, a legacy token). */
export function setFamilyOrg(deps: Deps, locator: string, family: string, org: string | null): Promise<void> {
  return familiesAt(deps, locator).setOrg(family, org);
}

/** The family's org becomes `org` if it is still `expected` (a refresh found the membership gone). */
export function setFamilyOrgIf(
  deps: Deps,
  locator: string,
  family: string,
  expected: string | null,
  org: string | null,
): Promise<void> {
  return familiesAt(deps, locator).setOrgIf(family, expected, org);
}

/**
 * A family's first token. `once`: unless the object knows the token already (`SessionFamilies.startOnce`), for a
 * start that may repeat after a lost answer and must never reset a family that moved on or was revoked. `dpopJkt`:
 * the DPoP key the family is bound to (a session signed in with a proof).
 */
export async function startFamily(
  deps: Deps,
  locator: string,
  family: string,
  token: string,
  lifetimeMs: number,
  { once = false, dpopJkt = null }: { once?: boolean; dpopJkt?: string | null } = {},
): Promise<void> {
  const now = deps.now();
  const families = familiesAt(deps, locator);
  const hash = await sha256Hex(token);
  const expiresAt = now + lifetimeMs;
  // Without a key the object is called exactly as before.
  const key: [string] | [] = dpopJkt ? [dpopJkt] : [];
  await (once
    ? families.startOnce(family, hash, now, expiresAt, ...key)
    : families.start(family, hash, now, expiresAt, ...key));
}

export function revokeFamily(deps: Deps, locator: string, family: string): Promise<void> {
  return familiesAt(deps, locator).revokeFamily(family);
}

/** Revokes the family `token` belongs to and names it, or null for a token this object never handed out. */
export async function revokeFamilyOfToken(
  deps: Deps,
  locator: string,
  token: string,
): Promise<string | null> {
  return familiesAt(deps, locator).revokeByToken(await sha256Hex(token));
}

/**
 * The family whose current (unrevoked, unexpired) token `token` is, or null: what introspection asks. `dpopJkt` (a
 * session's refresh): null too when the family is bound to another key than the request proved (null: none).
 */
export async function familyOfCurrentToken(
  deps: Deps,
  locator: string,
  token: string,
  dpopJkt?: string | null,
): Promise<string | null> {
  const families = familiesAt(deps, locator);
  const hash = await sha256Hex(token);
  // Without a key the object is called exactly as before.
  return dpopJkt === undefined
    ? families.familyOfCurrent(hash, deps.now())
    : families.familyOfCurrent(hash, deps.now(), dpopJkt);
}

/**
 * Whether the family `family` (a session's id) in the object of `locator` still stands: one object call, no D1. What
 * the service binding's `live` check asks (src/platform/liveness.ts); a revocation is seen by the next call.
 */
export function familyIsLive(deps: Deps, locator: string, family: string): Promise<boolean> {
  return familiesAt(deps, locator).isLive(family, deps.now());
}
