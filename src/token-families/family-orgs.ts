/**
 * The organization a session's family acts in, held by the family's object (issue 48, "an org switch adds no wave";
 * docs/decisions.md, "Issue 48: the org switch in one wave"). A switch (`POST /token {refreshToken, orgId}`) is
 * decided in the rotation's own run: the rotation records the org asked for, while the Worker reads the membership
 * beside it. A refused switch then puts the family back (`undo`): its token unspent, its org as it was.
 *
 * The org held here is never trusted on its own: every refresh of a session in an org reads the membership again
 * (src/auth/sessions/session-org.ts), so an org recorded for a switch that is later refused, or for a member removed
 * since, gives nothing. What it saves is the write to the session's row before the token is spent (the row gets the
 * org after the answer) and the bookmark the next refresh would have needed to read that write back.
 *
 * A family with no row here acts in the org its session's row names (sessions from before, and every session not
 * switched since). Both tables are created by the first switch, so objects that never saw one need no change.
 */

/** The family's row of `families` as a rotation found it, before it rotated: what `undo` puts back. */
export interface RotatedFrom {
  current: string;
  previous: string | null;
  successor: string | null;
  rotated_at: number;
  expires_at: number;
  touched_at: number;
}

/**
 * The columns of `families` a rotation changes, in one order for both statements that carry them: the switch's record
 * of the row before (`recordSwitch`) and the put-back that writes it again (session-families.ts `undoSwitch`).
 */
export const ROTATED_COLUMNS = [
  "current",
  "previous",
  "successor",
  "rotated_at",
  "expires_at",
  "touched_at",
] as const satisfies readonly (keyof RotatedFrom)[];

/** `from`'s values in ROTATED_COLUMNS' order, for a statement's bindings. */
export const rotatedValues = (from: RotatedFrom) => ROTATED_COLUMNS.map((column) => from[column]);

interface SwitchRow extends RotatedFrom {
  family: string;
  /** The candidate hash of the switch's rotation: names the switch, and is the token `undo` forgets. */
  id: string;
  /** Whether the family held an org before (`org_before`, possibly NULL: out of any org). */
  had_org: number;
  org_before: string | null;
  org_after: string | null;
  /** The rotation bound the family to the request's DPoP key. */
  bound: number;
  /** A duplicate inside the grace window was answered with the switch's successor: the token stays spent. */
  handed: number;
  [column: string]: SqlStorageValue;
}

/** What `held` answers: the org the family acts in (null: none), or undefined when the session's row says. */
export type HeldOrg = { org: string | null } | undefined;

export class FamilyOrgs {
  private orgs: boolean | undefined;

  constructor(private readonly sql: SqlStorage) {}

  private hasTables(): boolean {
    this.orgs ??=
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'orgs'").toArray().length >
      0;
    return this.orgs;
  }

  private createTables(): void {
    if (this.hasTables()) return;
    this.sql.exec("CREATE TABLE IF NOT EXISTS orgs (family TEXT PRIMARY KEY, org TEXT)");
    this.sql.exec(`CREATE TABLE IF NOT EXISTS switches (family TEXT PRIMARY KEY, id TEXT NOT NULL,
      current TEXT NOT NULL, previous TEXT, successor TEXT, rotated_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      touched_at INTEGER NOT NULL, had_org INTEGER NOT NULL, org_before TEXT, org_after TEXT, bound INTEGER NOT NULL,
      handed INTEGER NOT NULL)`);
    this.orgs = true;
  }

  held(family: string): HeldOrg {
    if (!this.hasTables()) return undefined;
    const row = this.sql
      .exec<{ org: string | null }>("SELECT org FROM orgs WHERE family = ?", family)
      .toArray()[0];
    return row ? { org: row.org } : undefined;
  }

  set(family: string, org: string | null): void {
    this.createTables();
    this.sql.exec("INSERT OR REPLACE INTO orgs (family, org) VALUES (?, ?)", family, org);
  }

  /**
   * A rotation that switches the family into `org`, in the rotation's run: the org is the family's from now on, and
   * what the rotation changed is kept until the next rotation, for `undo`. One switch at a time per family: a later
   * one replaces it (its rotation moved the token on, so the earlier one could not be put back anyway).
   */
  recordSwitch(family: string, id: string, from: RotatedFrom, org: string | null, bound: boolean): void {
    const before = this.held(family);
    this.createTables();
    this.sql.exec(
      `INSERT OR REPLACE INTO switches (family, id, ${ROTATED_COLUMNS.join(", ")}, had_org, org_before, org_after, bound, handed) VALUES (?, ?, ${ROTATED_COLUMNS.map(() => "?").join(", ")}, ?, ?, ?, ?, 0)`,
      family,
      id,
      ...rotatedValues(from),
      before ? 1 : 0,
      before?.org ?? null,
      org,
      bound ? 1 : 0,
    );
    this.set(family, org);
  }

  /** A duplicate inside the grace window got the family's successor: a switch pending on it can no longer unspend. */
  handedOut(family: string): void {
    if (this.hasTables()) this.sql.exec("UPDATE switches SET handed = 1 WHERE family = ?", family);
  }

  /**
   * The switch `id` was refused: its org goes back to what the family held before (unless something has set another
   * since), and, when nothing has happened to the family since its rotation, so does the rotation: `restore` is
   * called with the row to put back, and the answer is true (the presented token is current again). Not put back
   * (false): a duplicate was handed the successor, the family rotated on, was revoked (a sign-out) or expired.
   */
  undo(
    family: string,
    id: string,
    intact: (from: RotatedFrom) => boolean,
    restore: (from: RotatedFrom, bound: boolean) => void,
  ): boolean {
    if (!this.hasTables()) return false;
    const row = this.sql
      .exec<SwitchRow>("SELECT * FROM switches WHERE family = ? AND id = ?", family, id)
      .toArray()[0];
    if (!row) return false;
    this.sql.exec("DELETE FROM switches WHERE family = ?", family);
    const putBack = !row.handed && intact(row);
    if (putBack) restore(row, row.bound === 1);
    if (row.had_org) this.setIf(family, row.org_after, row.org_before);
    else this.sql.exec("DELETE FROM orgs WHERE family = ? AND org IS ?", family, row.org_after);
    return putBack;
  }

  /** The family's org becomes `org` if it is still `expected` (a refresh found the membership gone). */
  setIf(family: string, expected: string | null, org: string | null): void {
    if (!this.hasTables()) return;
    this.sql.exec("UPDATE orgs SET org = ? WHERE family = ? AND org IS ?", org, family, expected);
  }

  /** Forgets families that have expired (the object's alarm). */
  forgetExpired(now: number): void {
    if (!this.hasTables()) return;
    for (const table of ["orgs", "switches"]) {
      this.sql.exec(
        `DELETE FROM ${table} WHERE family IN (SELECT id FROM families WHERE expires_at <= ?)`,
        now,
      );
    }
  }
}
