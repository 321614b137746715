// What `import-supabase` no longer loses (docs/decisions.md, "Issue 44: what the Supabase import no longer loses"),
// in the command's own parts: a session's amr claims sent with it, the removal pass of SSO providers deleted at
// Supabase, and the report line of a second TOTP factor the service can't hold. The Worker's side of each is tested
// through the import API in test/move-in/supabase-sessions.test.ts and test/move-in/supabase-sso.test.ts.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs without types
import { Progress, Report } from "../../scripts/import-nhost/report.mjs";
// @ts-expect-error: plain .mjs without types
import { supabaseSessionsOf } from "../../scripts/import-supabase/sessions.mjs";
// @ts-expect-error: plain .mjs without types
import { removeGoneProviders } from "../../scripts/import-supabase/sso.mjs";
// @ts-expect-error: plain .mjs without types
import { buildSupabaseBundle } from "../../scripts/import-supabase/user-bundles.mjs";

const created = new Date("2026-01-01T00:00:00Z");
const quiet = () => new Progress({ write: () => true, isTTY: false });

describe("a session's second factor", () => {
  // Loss: a session GoTrue held at aal2 came out aal1 (asked for the code again). Its amr rows go with it, as GoTrue
  // reads them at every refresh (Postgres gives json_agg's timestamps as text with an offset).
  it("sends the session's mfa_amr_claims, newest first, each with its time; none read is null", () => {
    const session = {
      id: randomUUID(),
      user_id: "u",
      created_at: created,
      not_after: null,
      aal: "aal2",
      factor_id: null,
      refreshed_at: null,
      refresh_token_hmac_key: null,
      refresh_token_counter: null,
      amr: [
        { method: "totp", at: "2026-01-01T00:05:00.123456+00:00" },
        { method: "password", at: "2026-01-01T00:00:00+00:00" },
      ],
    };
    const token = { id: "1", session_id: session.id, token: "abcdefgh1234", created_at: created };
    const { sessions } = supabaseSessionsOf([session], [token], null);
    expect(sessions[0].amr).toEqual([
      { method: "totp", at: "2026-01-01T00:05:00.123Z" },
      { method: "password", at: "2026-01-01T00:00:00.000Z" },
    ]);
    expect(supabaseSessionsOf([{ ...session, amr: null }], [token], null).sessions[0].amr).toBeNull();
  });
});

/** The admin import API of the ledger and removals, over `ledger` (the orgs earlier runs made). */
function fakeApi(ledger: string[]) {
  const removed: { kind: string; ids: string[]; dryRun: boolean }[] = [];
  return {
    removed,
    get: async (path: string) => {
      const query = new URLSearchParams(path.split("?")[1]);
      expect(query.get("kind")).toBe("org");
      const after = query.get("after");
      const start = after ? ledger.indexOf(after) + 1 : 0;
      const items = ledger.slice(start, start + Number(query.get("limit")));
      return { items, next: start + items.length < ledger.length ? items[items.length - 1] : null };
    },
    post: async (path: string, body: { kind: string; ids: string[]; dryRun: boolean }) => {
      expect(path).toBe("/removals");
      removed.push(body);
      return { results: body.ids.map((id) => ({ id, outcome: "deleted" })) };
    },
  };
}

function fakeSupabase(providers: string[] | null) {
  return {
    has: (table: string) => table === "auth.sso_providers" && providers !== null,
    ids: async function* (table: string) {
      expect(table).toBe("auth.sso_providers");
      yield* providers ?? [];
    },
  };
}

const ids = (n: number) =>
  Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);

describe("SSO providers deleted at Supabase", () => {
  const run = (api: ReturnType<typeof fakeApi>, providers: string[] | null, allowMassRemoval = false) => {
    const report = new Report({ dryRun: false, server: "x", source: "Supabase" });
    const done = removeGoneProviders({
      api,
      supabase: fakeSupabase(providers),
      report,
      progress: quiet(),
      dryRun: false,
      allowMassRemoval,
    });
    return { report, done };
  };

  // Loss: a provider deleted at Supabase before the cut-over stayed an org here, its IdP still signing people in.
  it("removes the orgs of providers Supabase no longer has, even its only one, and counts them", async () => {
    const [a, b, c] = ids(3);
    const api = fakeApi([a!, b!, c!]);
    const { report, done } = run(api, [a!, c!]);
    await done;
    expect(api.removed).toEqual([{ kind: "org", ids: [b], dryRun: false }]);
    expect(report.counts("auth.sso_providers")).toMatchObject({ deleted: 1 });

    // Deleting a project's only provider is ordinary: no "wrong database" guard for an empty table (the users' pass
    // before it already showed this is the project imported before).
    const only = fakeApi([a!]);
    await run(only, []).done;
    expect(only.removed).toEqual([{ kind: "org", ids: [a], dryRun: false }]);
  });

  // Threat: a run against a database without GoTrue's SSO tables, or missing most providers (another project),
  // wiping the orgs here.
  it("removes nothing when Supabase has no SSO tables, and a mass removal waits for --allow-mass-removal", async () => {
    const none = fakeApi(ids(3));
    await run(none, null).done;
    expect(none.removed).toEqual([]);

    const many = fakeApi(ids(30));
    await expect(run(many, ids(30).slice(0, 5)).done).rejects.toThrow(/25 of 30 .*--allow-mass-removal/);
    expect(many.removed).toEqual([]);
    await run(many, ids(30).slice(0, 5), true).done;
    expect(many.removed.flatMap((r) => r.ids)).toHaveLength(25);
  });
});

describe("a second verified TOTP factor", () => {
  // Loss said, not silent: GoTrue lets a user verify up to 10 factors, several TOTP among them, but the service holds
  // one TOTP secret per user (on the user's row, src/auth/mfa/factors.ts). The newest is carried and each other is a
  // report line naming the factor, so the operator knows which authenticator app stops working.
  it("carries the newest and names each other one as not carried, with why", () => {
    const user = { id: randomUUID(), email: "two@example.com", created_at: created };
    const factor = (updated: string) => ({
      id: randomUUID(),
      factor_type: "totp",
      status: "verified",
      secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
      friendly_name: null,
      created_at: created,
      updated_at: new Date(updated),
    });
    const older = factor("2026-01-02T00:00:00Z");
    const newest = factor("2026-01-03T00:00:00Z");
    const { bundle, notCarried } = buildSupabaseBundle(
      user,
      { factors: [older, newest] },
      { now: Date.now() },
    );
    expect(bundle.factors).toEqual([expect.objectContaining({ id: newest.id, type: "totp" })]);
    expect(bundle.totpSecret).toBe(newest.secret);
    expect(notCarried).toEqual([
      {
        table: "auth.mfa_factors",
        id: older.id,
        reason: expect.stringMatching(/second verified TOTP factor: .*one TOTP factor per user/),
      },
    ]);
  });
});
