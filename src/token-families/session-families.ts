import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { FamilyOrgs, type HeldOrg, ROTATED_COLUMNS, rotatedValues } from "./family-orgs";

/**
 * Refresh-token families (contract §5.2) of sessions and OAuth2 grants, found from the token itself: a token's
 * locator (six hex digits, rotation.ts) names this object, and every family with that locator lives here (keyed
 * by session or grant id). The object knows every token hash it handed out until its family expires, so any earlier
 * token of a family is recognised as a replay for the family's whole lifetime, and a made-up token is merely unknown:
 * it revokes nothing. D1 is not written on a rotation; the object says when the family's last-used time is due.
 * A session's family may be bound to a DPoP key (RFC 9449, docs/oauth2.md §10.2): the key is checked here, in the
 * same run as the rotation it allows.
 *
 * Every method runs start to finish without awaiting, so no two rotations interleave.
 */

export type FamilyOutcome =
  /** The token was never handed out here (or its family expired and was forgotten). */
  | { outcome: "unknown" }
  /**
   * `presented` was current: the candidate is now. `touch`: the session registry's last-used time is due.
   * `bookmark`: the D1 bookmark the family's own writes reached (`raiseBookmark`), if any.
   */
  | {
      outcome: "rotated";
      family: string;
      touch: boolean;
      bookmark: string | null;
      jkt?: string | null;
      bound?: boolean;
      /** The org the family acts in, when this object holds it (family-orgs.ts); absent: the session's row says. */
      org?: string | null;
      /** This rotation recorded a switch (`switchTo`), which `undoSwitch` can put back. */
      switched?: boolean;
    }
  /** `presented` was rotated less than the grace window ago: answer with the same successor. */
  | {
      outcome: "grace";
      family: string;
      successorSealed: string;
      bookmark: string | null;
      jkt?: string | null;
      org?: string | null;
    }
  /**
   * The family is bound to a DPoP key (RFC 9449) and the request did not prove that key: nothing changed, the token
   * is not spent (a thief with the token alone can neither refresh nor, by replaying it, end the session).
   */
  | { outcome: "key-mismatch"; family: string }
  /** An older token of the family: the family is now revoked (RFC 9700 §4.14.2). */
  | { outcome: "replayed"; family: string }
  /** The family was revoked before (sign-out, an earlier replay). */
  | { outcome: "revoked"; family: string };

/** What a rotation asks of a family's object (the legacy drawer's `RefreshSession` takes the same). */
export interface RotateRequest {
  presentedHash: string;
  candidateHash: string;
  candidateSealed: string;
  now: number;
  graceMs: number;
  /** When the candidate token expires: the object forgets the family after that (see `alarm`). */
  expiresAt: number;
  /**
   * The thumbprint of the DPoP key the request proved (sessions only): a family bound to a key rotates only with
   * it; an unbound family is bound by the first rotation that carries one. Absent: no proof.
   */
  dpopJkt?: string | null;
}

/**
 * A rotation, and how stale the registry's last-used time may get before a refresh reports `touch`. `switchTo`: a
 * session's switch into an organization (null: out of any), recorded in the rotation's own run (family-orgs.ts).
 */
export type FamilyRotation = RotateRequest & { touchEveryMs: number; switchTo?: { org: string | null } };

interface FamilyRow {
  id: string;
  current: string;
  previous: string | null;
  successor: string | null;
  rotated_at: number;
  revoked: number;
  expires_at: number;
  touched_at: number;
  [column: string]: SqlStorageValue;
}

export class SessionFamilies extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Whether this object's tables exist (see `hasTables`). */
  private tables = false;
  /** Whether the `bookmarks` table exists (created by the first `raiseBookmark`, so older objects need no change). */
  private bookmarks: boolean | undefined;
  /** Whether the `keys` table exists (created by the first DPoP-bound family, likewise). */
  private keys: boolean | undefined;
  /** The orgs families act in, once switched (created by the first switch, likewise). */
  private readonly orgs: FamilyOrgs;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.orgs = new FamilyOrgs(this.sql);
  }

  /**
   * Tables are created by the first family, not by the constructor: a made-up refresh token names one of 16.7 M
   * objects (its locator), and an object only ever reached by made-up tokens must not get storage of its own. Every
   * read path asks this first and finds nothing without creating anything.
   */
  private hasTables(): boolean {
    this.tables ||=
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'families'").toArray()
        .length > 0;
    return this.tables;
  }

  private createTables(): void {
    if (this.hasTables()) return;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS families (
      id TEXT PRIMARY KEY, current TEXT NOT NULL, previous TEXT, successor TEXT, rotated_at INTEGER NOT NULL,
      revoked INTEGER NOT NULL, expires_at INTEGER NOT NULL, touched_at INTEGER NOT NULL)`);
    this.sql.exec("CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, family TEXT NOT NULL)");
    this.tables = true;
  }

  private familyOfToken(hash: string): FamilyRow | undefined {
    if (!this.hasTables()) return undefined;
    return this.sql
      .exec<FamilyRow>(
        "SELECT families.* FROM tokens JOIN families ON families.id = tokens.family WHERE tokens.hash = ?",
        hash,
      )
      .toArray()[0];
  }

  private armAlarm(at: number): void {
    // Output gates hold the answer until the alarm is stored, so no await is needed.
    void this.ctx.storage.getAlarm().then((armed) => {
      if (armed === null || armed > at) return this.ctx.storage.setAlarm(at);
    });
  }

  /** A new session: its first token, and the DPoP key it is bound to (`jkt`), if any. */
  start(family: string, hash: string, now: number, expiresAt: number, jkt?: string | null): void {
    this.createTables();
    this.setKey(family, jkt ?? null);
    this.sql.exec(
      "INSERT OR REPLACE INTO families (id, current, previous, successor, rotated_at, revoked, expires_at, touched_at) VALUES (?, ?, NULL, NULL, 0, 0, ?, ?)",
      family,
      hash,
      expiresAt,
      now,
    );
    this.sql.exec("INSERT OR REPLACE INTO tokens (hash, family) VALUES (?, ?)", hash, family);
    this.armAlarm(expiresAt);
  }

  /**
   * The same, unless this token is known here already: a start repeated because an earlier answer was lost (the
   * legacy drawer's successor handed out again) never resets a family that has rotated past it, or was revoked.
   */
  startOnce(family: string, hash: string, now: number, expiresAt: number, jkt?: string | null): void {
    if (!this.familyOfToken(hash)) this.start(family, hash, now, expiresAt, jkt);
  }

  rotate(request: FamilyRotation): FamilyOutcome {
    const { presentedHash, candidateHash, candidateSealed, now, graceMs, expiresAt, touchEveryMs } = request;
    const row = this.familyOfToken(presentedHash);
    if (!row || row.expires_at <= now) return { outcome: "unknown" };
    if (row.revoked) return { outcome: "revoked", family: row.id };
    // Checked before anything else about the token, in the same run as the rotation: a request without the key of a
    // bound family is not its holder's, so it neither rotates nor counts as a replay (RFC 9449 §5, §11).
    const jkt = this.keyOf(row.id);
    const proved = request.dpopJkt ?? null;
    if (jkt !== null && jkt !== proved) return { outcome: "key-mismatch", family: row.id };
    if (presentedHash === row.current) {
      const touch = now - row.touched_at >= touchEveryMs;
      this.sql.exec(
        "UPDATE families SET current = ?, previous = ?, successor = ?, rotated_at = ?, expires_at = ?, touched_at = ? WHERE id = ?",
        candidateHash,
        presentedHash,
        candidateSealed,
        now,
        expiresAt,
        touch ? now : row.touched_at,
        row.id,
      );
      this.sql.exec("INSERT INTO tokens (hash, family) VALUES (?, ?)", candidateHash, row.id);
      // An unbound family is bound by the first rotation that proves a key; from then on only that key rotates it.
      const bound = jkt === null && proved !== null;
      if (bound) this.setKey(row.id, proved);
      // The switch is the family's from this run on; the Worker reads the membership beside, and a refusal puts
      // this rotation back (`undoSwitch`).
      const { switchTo } = request;
      if (switchTo) this.orgs.recordSwitch(row.id, candidateHash, row, switchTo.org, bound);
      return {
        outcome: "rotated",
        family: row.id,
        touch,
        bookmark: this.bookmarkOf(row.id),
        jkt: jkt ?? proved,
        bound,
        ...orgField(switchTo ?? this.orgs.held(row.id)),
        ...(switchTo ? { switched: true } : {}),
      };
    }
    const inGrace = graceMs > 0 && now - row.rotated_at <= graceMs;
    if (presentedHash === row.previous && row.successor && inGrace) {
      // The successor is handed out twice now: a switch of the first request can no longer unspend its token.
      this.orgs.handedOut(row.id);
      return {
        outcome: "grace",
        family: row.id,
        successorSealed: row.successor,
        bookmark: this.bookmarkOf(row.id),
        // The key the successor's family has: a duplicate binds nothing (the first request decided).
        jkt,
        ...orgField(this.orgs.held(row.id)),
      };
    }
    this.revokeFamily(row.id);
    return { outcome: "replayed", family: row.id };
  }

  /**
   * A switch the Worker refused (the user is no active member of the org): the rotation `candidateHash` made is put
   * back when nothing has happened to the family since (the presented token is current again, the successor
   * forgotten, a key the rotation bound unbound), and the family's org goes back to what it was. True when the token
   * is unspent again; false when it could not be (a duplicate got the successor, a sign-out, a later rotation).
   */
  undoSwitch(family: string, candidateHash: string): boolean {
    if (!this.hasTables()) return false;
    const row = this.sql.exec<FamilyRow>("SELECT * FROM families WHERE id = ?", family).toArray()[0];
    return this.orgs.undo(
      family,
      candidateHash,
      (from) =>
        row !== undefined && !row.revoked && row.current === candidateHash && row.previous === from.current,
      (from, bound) => {
        this.sql.exec(
          `UPDATE families SET ${ROTATED_COLUMNS.map((column) => `${column} = ?`).join(", ")} WHERE id = ?`,
          ...rotatedValues(from),
          family,
        );
        this.sql.exec("DELETE FROM tokens WHERE hash = ?", candidateHash);
        if (bound) this.setKey(family, null);
      },
    );
  }

  /**
   * The family acts in `org` from now on: a switch whose rotation did not record it (a duplicate inside the grace
   * window, a token from before families), once its membership was read. A family this object does not hold gets
   * nothing.
   */
  setOrg(family: string, org: string | null): void {
    if (!this.hasTables()) return;
    if (this.sql.exec("SELECT 1 FROM families WHERE id = ?", family).toArray().length === 0) return;
    this.orgs.set(family, org);
  }

  /** The family's org becomes `org` if it is still `expected`: a refresh found the membership gone. */
  setOrgIf(family: string, expected: string | null, org: string | null): void {
    this.orgs.setIf(family, expected, org);
  }

  /**
   * The family whose current, unrevoked and unexpired token `hash` is; null otherwise (introspection). With `dpopJkt`
   * (a session's refresh, the proof's key or null for none): also null when the family is bound to another key, as
   * its rotation would refuse (`key-mismatch`), so nothing is decided or written for a request that cannot spend it.
   */
  familyOfCurrent(hash: string, now: number, dpopJkt?: string | null): string | null {
    const row = this.familyOfToken(hash);
    if (!row || row.revoked || row.expires_at <= now || row.current !== hash) return null;
    if (dpopJkt !== undefined) {
      const jkt = this.keyOf(row.id);
      if (jkt !== null && jkt !== dpopJkt) return null;
    }
    return row.id;
  }

  /**
   * Whether a family still stands: known here, not revoked (sign-out, a replay, its user disabled or deleted) and not
   * expired. The service binding's `live` check (src/platform/liveness.ts) asks it with the family an access token
   * names; it reads and creates nothing.
   */
  isLive(family: string, now: number): boolean {
    if (!this.hasTables()) return false;
    const row = this.sql
      .exec<{ revoked: number; expires_at: number }>(
        "SELECT revoked, expires_at FROM families WHERE id = ?",
        family,
      )
      .toArray()[0];
    return row !== undefined && !row.revoked && row.expires_at > now;
  }

  /** Sign-out by refresh token: the family of `hash`, now revoked, or null for a token this object never issued. */
  revokeByToken(hash: string): string | null {
    const row = this.familyOfToken(hash);
    if (!row) return null;
    this.revokeFamily(row.id);
    return row.id;
  }

  revokeFamily(family: string): void {
    if (!this.hasTables()) return;
    this.sql.exec("UPDATE families SET revoked = 1, successor = NULL WHERE id = ?", family);
  }

  private hasKeys(): boolean {
    this.keys ??=
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'keys'").toArray().length >
      0;
    return this.keys;
  }

  /** The DPoP key thumbprint a family is bound to, or null. */
  private keyOf(family: string): string | null {
    if (!this.hasKeys()) return null;
    const row = this.sql.exec<{ jkt: string }>("SELECT jkt FROM keys WHERE family = ?", family).toArray()[0];
    return row?.jkt ?? null;
  }

  private setKey(family: string, jkt: string | null): void {
    if (jkt === null) {
      if (this.hasKeys()) this.sql.exec("DELETE FROM keys WHERE family = ?", family);
      return;
    }
    if (!this.hasKeys()) {
      this.sql.exec("CREATE TABLE IF NOT EXISTS keys (family TEXT PRIMARY KEY, jkt TEXT NOT NULL)");
      this.keys = true;
    }
    this.sql.exec("INSERT OR REPLACE INTO keys (family, jkt) VALUES (?, ?)", family, jkt);
  }

  private hasBookmarks(): boolean {
    this.bookmarks ??=
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bookmarks'").toArray()
        .length > 0;
    return this.bookmarks;
  }

  private bookmarkOf(family: string): string | null {
    if (!this.hasBookmarks()) return null;
    const row = this.sql
      .exec<{ bookmark: string }>("SELECT bookmark FROM bookmarks WHERE family = ?", family)
      .toArray()[0];
    return row?.bookmark ?? null;
  }

  /**
   * The family's user wrote to their own row (docs/decisions.md, "Reads near the user"): the family's next refreshes
   * read D1 at least this fresh. Bookmarks only move forward (they are fixed-width hex, so text order is their order).
   * A family this object does not hold (expired, or a legacy session) gets nothing.
   */
  raiseBookmark(family: string, bookmark: string): void {
    if (!this.hasTables()) return;
    const known = this.sql.exec("SELECT 1 FROM families WHERE id = ?", family).toArray().length > 0;
    if (!known) return;
    if (!this.hasBookmarks()) {
      this.sql.exec("CREATE TABLE IF NOT EXISTS bookmarks (family TEXT PRIMARY KEY, bookmark TEXT NOT NULL)");
      this.bookmarks = true;
    }
    this.sql.exec(
      "INSERT INTO bookmarks (family, bookmark) VALUES (?, ?) ON CONFLICT (family) DO UPDATE SET bookmark = max(bookmark, excluded.bookmark)",
      family,
      bookmark,
    );
  }

  /** Families whose newest token has expired are forgotten, with every token hash of theirs. */
  override async alarm(): Promise<void> {
    if (!this.hasTables()) return;
    const now = Date.now();
    this.sql.exec("DELETE FROM tokens WHERE family IN (SELECT id FROM families WHERE expires_at <= ?)", now);
    if (this.hasBookmarks()) {
      this.sql.exec(
        "DELETE FROM bookmarks WHERE family IN (SELECT id FROM families WHERE expires_at <= ?)",
        now,
      );
    }
    if (this.hasKeys()) {
      this.sql.exec("DELETE FROM keys WHERE family IN (SELECT id FROM families WHERE expires_at <= ?)", now);
    }
    this.orgs.forgetExpired(now);
    this.sql.exec("DELETE FROM families WHERE expires_at <= ?", now);
    const next = this.sql.exec<{ at: number | null }>("SELECT min(expires_at) AS at FROM families").one().at;
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}

/** The org a family acts in, as an answer's field: absent when the object holds none (the session's row says). */
const orgField = (held: HeldOrg) => (held ? { org: held.org } : {});
