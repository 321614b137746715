// `npm run admin -- import-nhost` (scripts/import-nhost/): its pure parts, in Node. Reading Nhost's TOTP secrets, the
// UserBundle built from Nhost's rows, the merge that finds rows deleted in Nhost, the batches, byte lookup in a
// directory, retries, and the report's exit code. The run against Postgres and the service is tested end to end
// elsewhere.
import { createCipheriv, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs without types
import { withRetries } from "../../scripts/import-nhost/api.mjs";
// @ts-expect-error: plain .mjs without types
import { chunks, inOrder } from "../../scripts/import-nhost/batches.mjs";
// @ts-expect-error: plain .mjs without types
import { directorySource, fileRecord } from "../../scripts/import-nhost/files.mjs";
// @ts-expect-error: plain .mjs without types
import { countGone, missingFrom } from "../../scripts/import-nhost/removals.mjs";
// @ts-expect-error: plain .mjs without types
import { Progress, progressLine, Report } from "../../scripts/import-nhost/report.mjs";
// @ts-expect-error: plain .mjs without types
import { parseEncryptionKey, readTotpSecret } from "../../scripts/import-nhost/totp.mjs";
import {
  buildBundle,
  nhostTokenHash,
  refreshTokenId,
  // @ts-expect-error: plain .mjs without types
} from "../../scripts/import-nhost/user-bundles.mjs";

const KEY_HEX = "8f".repeat(32);
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSW"; // 52 base32 characters: Nhost's 32 bytes

/** As Nhost Auth's crypto.Encrypter writes the column: hex(nonce ‖ AES-GCM ciphertext ‖ tag), no AAD. */
function nhostEncrypt(plain: string, keyHex: string): string {
  const key = Buffer.from(keyHex, "hex");
  const nonce = randomBytes(12);
  const cipher = createCipheriv(`aes-${key.length * 8}-gcm`, key, nonce) as ReturnType<
    typeof createCipheriv
  > & { getAuthTag(): Buffer };
  const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return Buffer.concat([nonce, sealed]).toString("hex");
}

async function* stream<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("TOTP secrets as Nhost stores them", () => {
  const key = parseEncryptionKey(KEY_HEX);

  it("decrypts Nhost's encrypted column with its key", () => {
    const column = nhostEncrypt(SECRET, KEY_HEX);
    expect(column.length).toBeGreaterThanOrEqual(64);
    expect(readTotpSecret(column, key)).toEqual({ secret: SECRET, unreadable: false });
  });

  it("takes AES-128 and AES-192 keys as Go's aes.NewCipher does", () => {
    for (const hex of ["11".repeat(16), "22".repeat(24)])
      expect(readTotpSecret(nhostEncrypt(SECRET, hex), parseEncryptionKey(hex)).secret).toBe(SECRET);
  });

  it("keeps a value shorter than 64 characters as the plain base32 secret (Nhost before 0.43)", () => {
    expect(readTotpSecret(SECRET, null)).toEqual({ secret: SECRET, unreadable: false });
    expect(readTotpSecret(SECRET, key)).toEqual({ secret: SECRET, unreadable: false });
  });

  it("has nothing to read when there is no secret", () => {
    expect(readTotpSecret(null, key)).toEqual({ secret: null, unreadable: false });
    expect(readTotpSecret("", null)).toEqual({ secret: null, unreadable: false });
  });

  it("says unreadable, and why, without a key, with a wrong key, or for a damaged value", () => {
    const column = nhostEncrypt(SECRET, KEY_HEX);
    expect(readTotpSecret(column, null)).toMatchObject({
      secret: null,
      unreadable: true,
      why: /no NHOST_ENCRYPTION_KEY/,
    });
    expect(readTotpSecret(column, parseEncryptionKey("00".repeat(32)))).toMatchObject({
      secret: null,
      unreadable: true,
      why: /does not decrypt/,
    });
    const damaged = `${column.slice(0, -2)}${column.endsWith("00") ? "01" : "00"}`;
    expect(readTotpSecret(damaged, key)).toMatchObject({ unreadable: true });
    expect(readTotpSecret("z".repeat(80), key)).toMatchObject({ unreadable: true, why: /format/ });
  });

  it("refuses a key that is not 16, 24 or 32 bytes of hex", () => {
    expect(() => parseEncryptionKey("abc")).toThrow(/64 hex characters/);
    expect(() => parseEncryptionKey("g".repeat(64))).toThrow(/64 hex characters/);
    expect(parseEncryptionKey(` ${KEY_HEX}\n`).length).toBe(32);
  });
});

describe("the UserBundle built from Nhost's rows", () => {
  const userId = "0b7f0c1e-8d1a-4a57-9a51-6f3a2b1c9d01";
  const user = {
    id: userId,
    created_at: new Date("2024-01-02T03:04:05.678Z"),
    updated_at: new Date("2024-02-02T03:04:05.678Z"),
    last_seen: null,
    disabled: false,
    display_name: "Ada",
    avatar_url: "",
    locale: "en",
    email: "Ada@Example.com",
    phone_number: null,
    email_verified: true,
    phone_number_verified: false,
    new_email: null,
    password_hash: "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
    default_role: "user",
    is_anonymous: false,
    totp_secret: null,
    active_mfa_type: null,
    ticket: "verifyEmail:5a0b6b56-8ad9-4a3e-a6a4-8a1a5f0f2b11",
    ticket_expires_at: new Date("2030-01-01T00:00:00Z"),
    metadata: { plan: "pro" },
  };
  const token = "3e1b6f8a-2c55-4f0e-9a1d-7b8c9d0e1f23";

  it("carries every column, the roles, providers, security keys and tokens in the wire's shape", () => {
    const publicKey = Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0xff, 0xfe]);
    const { bundle, leftOut, notCarried } = buildBundle(
      user,
      {
        roles: [
          { user_id: userId, role: "me" },
          { user_id: userId, role: "user" },
        ],
        providers: [
          {
            id: "9d3c1c55-7a2e-4a3b-8b9c-0d1e2f3a4b5c",
            user_id: userId,
            provider_id: "github",
            provider_user_id: "12345",
            created_at: new Date("2024-01-03T00:00:00Z"),
            updated_at: new Date("2024-01-04T00:00:00Z"),
          },
        ],
        securityKeys: [
          {
            id: "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            user_id: userId,
            credential_id: "AbC-_x",
            credential_public_key: publicKey,
            counter: "42",
            transports: "usb,nfc",
            nickname: null,
          },
          {
            id: "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            user_id: userId,
            credential_id: "nokey",
            credential_public_key: null,
            counter: "0",
            transports: "",
            nickname: null,
          },
        ],
        refreshTokens: [
          {
            id: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
            user_id: userId,
            created_at: new Date("2024-03-01T00:00:00Z"),
            expires_at: new Date("2030-03-01T00:00:00Z"),
            hash: nhostTokenHash(token),
            metadata: null,
            type: "pat",
          },
        ],
      },
      null,
    );
    expect(bundle).toEqual({
      id: userId,
      createdAt: "2024-01-02T03:04:05.678Z",
      updatedAt: "2024-02-02T03:04:05.678Z",
      lastSeen: null,
      disabled: false,
      displayName: "Ada",
      avatarUrl: "",
      locale: "en",
      email: "Ada@Example.com",
      phoneNumber: null,
      emailVerified: true,
      phoneNumberVerified: false,
      newEmail: null,
      passwordHash: user.password_hash,
      defaultRole: "user",
      roles: ["me", "user"],
      isAnonymous: false,
      activeMfaType: null,
      totpSecret: null,
      totpSecretUnreadable: false,
      ticket: user.ticket,
      ticketExpiresAt: "2030-01-01T00:00:00.000Z",
      metadata: { plan: "pro" },
      providers: [
        {
          id: "9d3c1c55-7a2e-4a3b-8b9c-0d1e2f3a4b5c",
          providerId: "github",
          providerUserId: "12345",
          createdAt: "2024-01-03T00:00:00.000Z",
          updatedAt: "2024-01-04T00:00:00.000Z",
        },
      ],
      securityKeys: [
        {
          id: "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
          credentialId: "AbC-_x",
          publicKey: "pQECAyb__g",
          counter: 42,
          transports: "usb,nfc",
          nickname: null,
        },
      ],
      refreshTokens: [
        {
          id: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
          createdAt: "2024-03-01T00:00:00.000Z",
          expiresAt: "2030-03-01T00:00:00.000Z",
          metadata: null,
          type: "pat",
          hash: nhostTokenHash(token),
        },
      ],
    });
    expect(leftOut).toEqual([
      {
        table: "auth.user_security_keys",
        id: "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        reason: "no public key: unusable",
      },
    ]);
    expect(notCarried).toEqual([]);
    // JSON as sent: no undefined left that would change the bundle's shape.
    expect(JSON.parse(JSON.stringify(bundle))).toEqual(bundle);
  });

  it("hashes a token as Nhost does: \\x and the hex SHA-256 of its text", () => {
    expect(nhostTokenHash("abc")).toBe("\\xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("never uses a token that is its own id (Nhost before 00015) as the imported id", () => {
    const hash = nhostTokenHash(token);
    const id = refreshTokenId(token, hash);
    expect(id).not.toBe(token);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(refreshTokenId(token, hash)).toBe(id); // the same on every run
    expect(refreshTokenId("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", hash)).toBe(
      "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
    );
    const { bundle } = buildBundle(
      user,
      {
        refreshTokens: [
          { id: token, created_at: new Date(), expires_at: new Date(), hash, metadata: null, type: null },
        ],
      },
      null,
    );
    expect(bundle.refreshTokens[0]).toMatchObject({ id, hash, type: "regular" });
    expect(JSON.stringify(bundle)).not.toContain(token);
  });

  it("decrypts TOTP with the key; without it, lists a user whose TOTP is on as not carried", () => {
    const withTotp = { ...user, totp_secret: nhostEncrypt(SECRET, KEY_HEX), active_mfa_type: "totp" };
    const readable = buildBundle(withTotp, {}, parseEncryptionKey(KEY_HEX));
    expect(readable.bundle).toMatchObject({
      totpSecret: SECRET,
      totpSecretUnreadable: false,
      activeMfaType: "totp",
    });
    expect(readable.notCarried).toEqual([]);
    const unreadable = buildBundle(withTotp, {}, null);
    expect(unreadable.bundle).toMatchObject({ totpSecret: null, totpSecretUnreadable: true });
    expect(unreadable.notCarried).toEqual([
      { table: "auth.users", id: userId, reason: expect.stringMatching(/TOTP secret unreadable/) },
    ]);
    // Set up but never switched on: nothing to lose, left out knowingly.
    const inactive = buildBundle({ ...withTotp, active_mfa_type: null }, {}, null);
    expect(inactive.notCarried).toEqual([]);
    expect(inactive.leftOut).toEqual([expect.objectContaining({ table: "auth.users", column: true })]);
  });

  it("sends no ticket expiry without a ticket, and null for Postgres' infinity", () => {
    const { bundle } = buildBundle(
      { ...user, ticket: null, last_seen: new Date(Number.POSITIVE_INFINITY) },
      {},
      null,
    );
    expect(bundle.ticket).toBeNull();
    expect(bundle.ticketExpiresAt).toBeNull();
    expect(bundle.lastSeen).toBeNull();
  });
});

describe("finding rows deleted in Nhost: the merge of two sorted id streams", () => {
  it("yields the ledger's ids that Nhost does not have", async () => {
    const ledger = ["a1", "b2", "c3", "d4", "f6"];
    const nhost = ["a0", "b2", "c3", "e5", "f6", "g7"];
    expect(await collect(missingFrom(stream(ledger), stream(nhost)))).toEqual(["a1", "d4"]);
  });

  it("yields everything when Nhost has nothing past the ledger's start, and nothing for an empty ledger", async () => {
    expect(await collect(missingFrom(stream(["x", "y"]), stream(["a", "b"])))).toEqual(["x", "y"]);
    expect(await collect(missingFrom(stream([]), stream(["a"])))).toEqual([]);
    expect(await collect(missingFrom(stream(["a", "b"]), stream(["a", "b"])))).toEqual([]);
  });

  it("compares uuids in byte order, the order of Postgres' uuid and of the ledger", async () => {
    const ids = [
      "00000000-0000-4000-8000-000000000001",
      "0a000000-0000-4000-8000-000000000000",
      "a0000000-0000-4000-8000-000000000000",
      "f0000000-0000-4000-8000-000000000000",
    ];
    expect(await collect(missingFrom(stream(ids), stream([ids[1]!, ids[3]!])))).toEqual([ids[0], ids[2]]);
  });

  it("refuses a stream out of order rather than delete what Nhost still has", async () => {
    await expect(collect(missingFrom(stream(["a", "c", "b"]), stream(["a"])))).rejects.toThrow(
      /ledger are not in ascending byte order/,
    );
    await expect(collect(missingFrom(stream(["z"]), stream(["b", "a"])))).rejects.toThrow(
      /Nhost's ids are not in ascending byte order/,
    );
    // Bucket ids: "B" < "a" in byte order (a collation would say otherwise).
    expect(await collect(missingFrom(stream(["B", "a"]), stream(["B"])))).toEqual(["a"]);
  });
});

describe("the guard against another project's database", () => {
  it("counts what earlier runs imported and how much of it is gone, reading the ledger page by page", async () => {
    const ledger = Array.from({ length: 2500 }, (_, i) => `id-${String(i).padStart(5, "0")}`);
    const api = {
      get: async (path: string) => {
        const query = new URLSearchParams(path.split("?")[1]);
        const after = query.get("after");
        const start = after ? ledger.indexOf(after) + 1 : 0;
        const items = ledger.slice(start, start + Number(query.get("limit")));
        return { items, next: start + items.length < ledger.length ? items[items.length - 1] : null };
      },
    };
    expect(await countGone(api, stream(ledger.slice(10)), "user")).toEqual({ gone: 10, total: 2500 });
    expect(await countGone(api, stream(["other-project"]), "user")).toEqual({ gone: 2500, total: 2500 });
  });
});

describe("batches of the import API", () => {
  it("holds at most 100 rows and stays under the body budget", () => {
    const items = Array.from({ length: 250 }, (_, i) => ({ id: String(i) }));
    expect(chunks(items, 1024 * 1024).map((batch: unknown[]) => batch.length)).toEqual([100, 100, 50]);
    const small = chunks(items, 500, "users");
    for (const batch of small)
      expect(JSON.stringify({ dryRun: false, users: batch }).length).toBeLessThanOrEqual(500);
    expect(small.flat()).toEqual(items);
    const huge = { id: "big", blob: "x".repeat(2000) };
    expect(chunks([{ id: "1" }, huge, { id: "2" }], 500)).toEqual([[{ id: "1" }], [huge], [{ id: "2" }]]);
  });

  it("matches results to the rows sent, by id when the order differs", () => {
    const batch = [{ id: "a" }, { id: "b" }];
    expect(
      inOrder(batch, [
        { id: "b", outcome: "unchanged" },
        { id: "a", outcome: "imported" },
      ]),
    ).toEqual([
      { id: "a", outcome: "imported" },
      { id: "b", outcome: "unchanged" },
    ]);
    expect(inOrder(batch, [{ id: "a", outcome: "imported" }])[1]).toMatchObject({
      id: "b",
      outcome: "skipped",
    });
  });
});

describe("retries", () => {
  const answer = (status: number) => new Response(status === 200 ? "{}" : "busy", { status });

  it("retries a 503 and a network error, then answers", async () => {
    const statuses = [503, 0, 200];
    const waits: number[] = [];
    const { response } = await withRetries(
      async () => {
        const status = statuses.shift()!;
        if (status === 0) throw new TypeError("fetch failed");
        return answer(status);
      },
      { wait: async (ms: number) => waits.push(ms) },
    );
    expect(response.status).toBe(200);
    expect(waits).toHaveLength(2);
  });

  it("gives up after its tries with the last answer, and never retries a 4xx", async () => {
    let calls = 0;
    const busy = await withRetries(
      async () => {
        calls++;
        return answer(503);
      },
      { delays: [1, 1], wait: async () => {} },
    );
    expect(busy.response.status).toBe(503);
    expect(calls).toBe(3);
    calls = 0;
    const refused = await withRetries(
      async () => {
        calls++;
        return answer(400);
      },
      { wait: async () => {} },
    );
    expect(refused.response.status).toBe(400);
    expect(calls).toBe(1);
    const down = await withRetries(
      async () => {
        throw new TypeError("fetch failed");
      },
      { delays: [1], wait: async () => {} },
    );
    expect(down.error).toBeInstanceOf(TypeError);
  });
});

describe("file contents in a directory", () => {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-import-files-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const direct = "11111111-1111-4111-8111-111111111111";
  const nested = "22222222-2222-4222-8222-222222222222";
  writeFileSync(join(dir, direct), "direct");
  mkdirSync(join(dir, "nhost-root"));
  writeFileSync(join(dir, "nhost-root", nested), "in the root folder");

  it("finds objects by id directly in DIR or in the root folder, never outside", async () => {
    const source = directorySource(dir);
    expect(await source.find(direct)).toMatchObject({ size: 6 });
    expect(await source.find(nested)).toMatchObject({ size: 18 });
    expect(await source.find("33333333-3333-4333-8333-333333333333")).toBeNull();
    expect(await source.find("../nhost-root")).toBeNull();
    const opened = await source.open(nested);
    expect(await new Response(opened.body()).text()).toBe("in the root folder");
  });

  it("reads a storage.files row as the wire's record, etag with its quotes", () => {
    expect(
      fileRecord({
        id: direct,
        bucket_id: "default",
        name: "a.txt",
        size: 6,
        mime_type: "text/plain",
        etag: '"abc"',
        is_uploaded: true,
        uploaded_by_user_id: null,
        metadata: null,
        created_at: new Date("2024-01-01T00:00:00Z"),
        updated_at: new Date("2024-01-01T00:00:00Z"),
      }),
    ).toEqual({
      id: direct,
      bucketId: "default",
      name: "a.txt",
      size: 6,
      mimeType: "text/plain",
      etag: '"abc"',
      isUploaded: true,
      uploadedByUserId: null,
      metadata: null,
      createdAt: "2024-01-01T00:00:00.000Z",
      updatedAt: "2024-01-01T00:00:00.000Z",
    });
  });
});

describe("the report", () => {
  it("exits 0 when rows were only imported, unchanged or knowingly left out", () => {
    const report = new Report();
    report.add("auth.users", "read", 3);
    report.add("auth.users", "imported", 2);
    report.add("auth.users", "unchanged");
    report.leftOut("refresh_tokens", "expired, not needed", 5);
    expect(report.exitCode()).toBe(0);
    expect(report.toJSON()).toMatchObject({
      ok: true,
      tables: { "auth.users": { read: 3, imported: 2, unchanged: 1 } },
      leftOut: [{ table: "auth.refresh_tokens", reason: "expired, not needed", count: 5 }],
    });
    expect(report.lines().join("\n")).toMatch(/auth\.users\s+3\s+2\s+0\s+1/);
  });

  it("exits 1 and lists each row not carried, one entry per row", () => {
    const report = new Report({ dryRun: true });
    report.notCarried("auth.users", "u1", "TOTP secret unreadable");
    report.notCarried("users", "u1", "duplicate email");
    report.notCarried("auth.refresh_tokens", "t1", "user not found");
    expect(report.exitCode()).toBe(1);
    expect(report.toJSON().notCarried).toEqual([
      { table: "auth.users", id: "u1", reason: "TOTP secret unreadable; duplicate email" },
      { table: "auth.refresh_tokens", id: "t1", reason: "user not found" },
    ]);
    const text = report.lines().join("\n");
    expect(text).toMatch(/^DRY RUN: nothing was written/);
    expect(text).toContain("Not carried (2):");
  });

  it("writes progress as lines in a log, at most once a second but always the last", () => {
    const written: string[] = [];
    let now = 0;
    const progress = new Progress(
      { isTTY: false, write: (text: string) => written.push(text) },
      { now: () => now },
    );
    const counts = { read: 100, imported: 80, unchanged: 20, updated: 0 };
    now = 5000;
    progress.update("auth.users", counts);
    now = 5500;
    progress.update("auth.users", counts); // too soon: not written
    progress.done("auth.users", { ...counts, read: 120, unchanged: 40 });
    expect(written).toEqual([
      "auth.users: 100 read, 80 imported, 20 unchanged\n",
      "auth.users: 120 read, 80 imported, 40 unchanged\n",
    ]);
    expect(progressLine("storage.files", { read: 2, imported: 2 }, 2048)).toBe(
      "storage.files: 2 read, 2 imported, 2.0 KiB",
    );
  });
});
