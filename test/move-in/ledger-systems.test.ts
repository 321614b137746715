import { describe, expect, it } from "vitest";
import { expectContractError, PASSWORD, service } from "../helpers";
import { userD1 } from "../support/shards";
import { admin, type ImportAnswer, nhostBcrypt, nhostUser } from "./support";

/**
 * One ledger, many systems (docs/decisions.md, "Issue 44: one ledger, many systems"): every ledger row records the
 * system its run imported from (`system` on the users batch, the ledger page and the removals; absent: `nhost`, as
 * the Nhost command always sent). A system's delta run lists and removes only its own users.
 */
const svc = service();
const hash = await nhostBcrypt(PASSWORD);

async function importAs(system: string | undefined, users: unknown[], dryRun = false) {
  const response = await svc.request("POST", "/admin/import/nhost/users", {
    json: { users, dryRun, ...(system ? { system } : {}) },
    headers: admin(),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as ImportAnswer).results;
}

async function ledgerIds(query: string) {
  const ids: string[] = [];
  for (let after = ""; ; ) {
    const response = await svc.request("GET", `/admin/import/nhost/ledger?kind=user&${query}${after}`, {
      headers: admin(),
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { items: string[]; next: string | null };
    ids.push(...page.items);
    if (!page.next) return ids;
    after = `&after=${page.next}`;
  }
}

const removals = async (json: Record<string, unknown>) => {
  const response = await svc.request("POST", "/admin/import/nhost/removals", { json, headers: admin() });
  expect(response.status).toBe(200);
  return ((await response.json()) as ImportAnswer).results;
};

const userRow = (id: string) =>
  userD1(id)
    .prepare("SELECT display_name FROM users WHERE id = ?")
    .bind(id)
    .first<{ display_name: string }>();
const ledgerSystems = async (id: string) =>
  (
    await userD1(id)
      .prepare("SELECT kind, system FROM import_ledger WHERE id = ? OR owner = ? ORDER BY kind")
      .bind(id, id)
      .all<{ kind: string; system: string }>()
  ).results;

describe("the ledger records each row's system", () => {
  // Threat: `import-nhost` after `import-users` read the vendor's users as "deleted in Nhost" (they are in the ledger,
  // not in Nhost's database) and its removal pass deleted them: data loss stopped only by the mass-removal guard.
  it("users imported from a CSV are not on Nhost's ledger page, and a Nhost removal naming them leaves them", async () => {
    const fromCsv = await nhostUser({}, hash);
    const fromNhost = await nhostUser({}, hash);
    expect(await importAs("csv", [fromCsv.bundle])).toEqual([{ id: fromCsv.id, outcome: "imported" }]);
    // The Nhost command as it always called the API: no `system`.
    expect(await importAs(undefined, [fromNhost.bundle])).toEqual([
      { id: fromNhost.id, outcome: "imported" },
    ]);

    // The user's row and its tokens' tombstones carry the run's system.
    expect(await ledgerSystems(fromCsv.id)).toEqual([
      { kind: "token", system: "csv" },
      { kind: "token", system: "csv" },
      { kind: "user", system: "csv" },
    ]);
    expect((await ledgerSystems(fromNhost.id)).every((row) => row.system === "nhost")).toBe(true);

    const nhostPage = await ledgerIds("limit=1000");
    expect(nhostPage).toContain(fromNhost.id);
    expect(nhostPage).not.toContain(fromCsv.id);
    expect(await ledgerIds("system=nhost&limit=7")).toEqual(nhostPage);
    const csvPage = await ledgerIds("system=csv&limit=1000");
    expect(csvPage).toContain(fromCsv.id);
    expect(csvPage).not.toContain(fromNhost.id);

    // A Nhost removal naming the CSV's user (a command older than this, a hand-made call) does not touch it.
    expect(await removals({ kind: "user", ids: [fromCsv.id] })).toEqual([
      { id: fromCsv.id, outcome: "absent" },
    ]);
    expect(await removals({ system: "nhost", kind: "user", ids: [fromCsv.id] })).toEqual([
      { id: fromCsv.id, outcome: "absent" },
    ]);
    expect(await userRow(fromCsv.id)).not.toBeNull();
    expect(await ledgerIds("system=csv&limit=1000")).toContain(fromCsv.id);

    // The CSV's own removal removes it, and leaves the Nhost user named beside it.
    expect(await removals({ system: "csv", kind: "user", ids: [fromCsv.id, fromNhost.id] })).toEqual([
      { id: fromCsv.id, outcome: "deleted" },
      { id: fromNhost.id, outcome: "absent" },
    ]);
    expect(await userRow(fromCsv.id)).toBeNull();
    expect(await userRow(fromNhost.id)).not.toBeNull();
    expect(await ledgerIds("system=csv&limit=1000")).not.toContain(fromCsv.id);
  });

  // Threat: a second system importing an id the first owns would overwrite the first's user, and the first system's
  // next delta run would then remove a user the second still has (or the second's would undo the first's removal).
  it("the same id from a second system is skipped: already imported from the first", async () => {
    const user = await nhostUser({}, hash);
    expect(await importAs("auth0", [user.bundle])).toEqual([{ id: user.id, outcome: "imported" }]);
    const changed = { ...user.bundle, displayName: "Someone Else", updatedAt: new Date().toISOString() };
    for (const dryRun of [true, false])
      expect(await importAs("nhost", [changed], dryRun)).toEqual([
        {
          id: user.id,
          outcome: "skipped",
          reasons: [
            {
              table: "auth.users",
              id: user.id,
              reason: "already imported from auth0: not imported from nhost",
            },
          ],
        },
      ]);
    expect((await userRow(user.id))!.display_name).toBe("Moved User");
    expect((await ledgerSystems(user.id)).map((row) => row.system)).toEqual(["auth0", "auth0", "auth0"]);
    expect(await importAs("auth0", [user.bundle])).toEqual([{ id: user.id, outcome: "unchanged" }]);
  });

  // Threat: import-supabase names each user's system in its bundles (it shapes the checks); a batch sent under another
  // system would record them where that system's removal pass lists them.
  it("a user whose bundle names another system than its batch's is skipped, nothing written", async () => {
    const user = await nhostUser({ system: "nhost" }, hash);
    expect(await importAs("csv", [user.bundle])).toEqual([
      {
        id: user.id,
        outcome: "skipped",
        reasons: [
          { table: "auth.users", id: user.id, reason: "the user's system \"nhost\" is not the run's (csv)" },
        ],
      },
    ]);
    expect(await userRow(user.id)).toBeNull();
    expect(await ledgerSystems(user.id)).toEqual([]);
    // The bundle's own system, the batch naming none: recorded under it.
    expect(await importAs(undefined, [user.bundle])).toEqual([{ id: user.id, outcome: "imported" }]);
    expect((await ledgerSystems(user.id)).map((row) => row.system)).toEqual(["nhost", "nhost", "nhost"]);
  });

  it("a system the service does not know is a 400 in the contract's shape, nothing written", async () => {
    const user = await nhostUser({}, hash);
    const users = await svc.request("POST", "/admin/import/nhost/users", {
      json: { system: "okta", users: [user.bundle] },
      headers: admin(),
    });
    await expectContractError(users, "users from an unknown system");
    expect(await userRow(user.id)).toBeNull();
    await expectContractError(
      await svc.request("GET", "/admin/import/nhost/ledger?kind=user&system=okta", { headers: admin() }),
      "the ledger of an unknown system",
    );
    await expectContractError(
      await svc.request("POST", "/admin/import/nhost/removals", {
        json: { system: "Nhost", kind: "user", ids: [user.id] },
        headers: admin(),
      }),
      "removals of an unknown system",
    );
  });
});
