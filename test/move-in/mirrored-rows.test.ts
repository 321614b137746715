import { describe, expect, it } from "vitest";
import { PASSWORD, service } from "../helpers";
import { admin, importUsers, iso, nhostBcrypt, nhostTokenHash, nhostUser } from "./support";

/**
 * Rows this service's Postgres mirror wrote into the database `import-nhost` reads (the app's database is Nhost's own
 * while Hasura stays there): the command finds them in `edge_auth_mirror.versions` and says so (`mirrored`). They are
 * this service's own data coming back, never a change in Nhost: before, the next delta run counted them as "updated"
 * users (and wrote the mirror's possibly stale copy back) and reported users and files created here as errors.
 * The command's side (reading the versions table) is tested with the real mirror in test/compat/move-in.test.ts.
 */

const svc = service();
const hash = await nhostBcrypt(PASSWORD);

const userOf = async (id: string) => {
  const response = await svc.request("GET", `/admin/users/${id}`, { headers: admin() });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe("rows the Postgres mirror wrote", () => {
  it("a user created here, mirrored: kept with the reason, not imported, not an error", async () => {
    const { bundle, id } = await nhostUser({ mirrored: true, passwordHash: null });
    const { results } = await importUsers(svc, [bundle]);
    expect(results).toEqual([
      {
        id,
        outcome: "kept",
        reasons: [
          {
            table: "auth.users",
            id,
            reason: expect.stringMatching(/written to this database by its Postgres mirror/),
          },
        ],
      },
    ]);
    expect((await userOf(id)).status).toBe(404);
  });

  it("an imported user's row the mirror rewrote is unchanged, never written back; Nhost's new session still comes", async () => {
    const { bundle, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    // The mirror's copy (a step behind: it has another name than the service now), with the times its write stamped.
    const echoed = {
      ...bundle,
      mirrored: true,
      displayName: "Stale copy",
      lastSeen: iso(Date.now()),
      updatedAt: iso(Date.now()),
    };
    expect((await importUsers(svc, [echoed])).results).toEqual([{ id, outcome: "unchanged" }]);
    expect((await userOf(id)).body.displayName).toBe("Moved User");
    // The same again: nothing to compare but the rest of the user.
    const again = { ...echoed, displayName: "Another echo", updatedAt: iso(Date.now() + 5000) };
    expect((await importUsers(svc, [again])).results).toEqual([{ id, outcome: "unchanged" }]);

    const token = crypto.randomUUID();
    const tokenRow = {
      ...(bundle.refreshTokens as Record<string, unknown>[])[0]!,
      id: crypto.randomUUID(),
      hash: await nhostTokenHash(token),
    };
    const withToken = { ...again, refreshTokens: [...(bundle.refreshTokens as unknown[]), tokenRow] };
    const result = (await importUsers(svc, [withToken])).results[0]! as {
      outcome: string;
      carried?: unknown[];
    };
    expect(result.outcome).toBe("unchanged");
    expect(result.carried).toEqual([{ table: "auth.refresh_tokens", id: tokenRow.id }]);
    expect((await svc.post("/token", { refreshToken: token })).status).toBe(200);
  });

  it("a file of this service, mirrored: kept with the reason, no bytes asked for", async () => {
    const bytes = new TextEncoder().encode("uploaded here");
    const record = {
      id: crypto.randomUUID(),
      bucketId: "default",
      name: "here.txt",
      size: bytes.length,
      mimeType: "text/plain",
      etag: '"x"',
      isUploaded: true,
      uploadedByUserId: crypto.randomUUID(),
      metadata: null,
      createdAt: iso(Date.now()),
      updatedAt: iso(Date.now()),
    };
    const plan = (files: unknown[]) =>
      svc.request("POST", "/admin/import/nhost/files/plan", { json: { files }, headers: admin() });
    const mirrored = (await (await plan([{ ...record, mirrored: true }])).json()) as { results: unknown[] };
    expect(mirrored.results).toEqual([
      {
        id: record.id,
        outcome: "kept",
        reasons: [
          { table: "storage.files", id: record.id, reason: expect.stringMatching(/Postgres mirror/) },
        ],
      },
    ]);
    const plain = (await (await plan([record])).json()) as { results: { outcome: string }[] };
    expect(plain.results[0]!.outcome).toBe("needs-bytes");
  });
});
