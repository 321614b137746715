import { describe, expect, it, vi } from "vitest";
import firebase from "../fixtures/imported-hashes/firebase.json";
import python from "../fixtures/imported-hashes/python.json";
import { expectError, service, uniqueAddress } from "../helpers";
import { userD1 } from "../support/shards";
import { importUsers, nhostUser } from "./support";

/**
 * Users moved in with another system's password hash (contract supabase.md §5, `import-users`): every `passwordHasher`
 * the contract names, through the admin import API and the real sign-in. The fixtures were made by independent
 * implementations (Python's passlib, argon2-cffi, bcrypt and hashlib; the firebase-scrypt npm package): their tools,
 * versions and commands are in test/fixtures/imported-hashes/generate.py and generate-firebase.mjs.
 */

const svc = service();

const FIXTURES = [
  ...python.hashes.map((row) => ({ ...row, password: python.password })),
  ...firebase.hashes.map((row) => ({ ...row, hasher: firebase.hasher })),
];

const signIn = (email: string, password: string) =>
  svc.request("POST", "/signin/email-password", {
    json: { email, password },
    headers: { "cf-connecting-ip": uniqueAddress() },
  });
const storedHash = async (id: string) =>
  (
    await userD1(id)
      .prepare("SELECT password_hash FROM users WHERE id = ?")
      .bind(id)
      .first<{ password_hash: string }>()
  )?.password_hash;

/** A user as the import sends it, with a hash in the layout `passwordHasher` names (no tokens or links: not needed). */
const importedUser = (passwordHasher: unknown, passwordHash: string) =>
  nhostUser(
    { passwordHasher, refreshTokens: [], providers: [], ticket: null, ticketExpiresAt: null },
    passwordHash,
  );

describe("users imported with another system's password hash", () => {
  it("each format signs in with its password, not with a wrong one, and is replaced by argon2id at the first sign-in", async () => {
    const users = await Promise.all(FIXTURES.map((f) => importedUser(f.hasher, f.hash)));
    const { results } = await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    expect(results.map((r) => r.outcome)).toEqual(FIXTURES.map(() => "imported"));
    // MD5 is flagged in the report: an unsalted fast digest, the weakest format the import takes.
    const md5 = FIXTURES.findIndex((f) => f.hasher === "md5");
    expect(results[md5]!.warnings).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^MD5/) }),
    ]);

    // One user after another would be ~90 sign-ins in a row: each user's steps in order, the users side by side.
    await Promise.all(
      FIXTURES.map(async (fixture, i) => {
        const { id, email } = users[i]!;
        const label = `${fixture.hasher}: ${fixture.tool}`;
        // Stored in a form that names its scheme: as given, but the two that say nothing of it alone get a tag.
        const tag = { md5: "$md5-hex$", scrypt_firebase: "$firebase-scrypt$" }[fixture.hasher] ?? "";
        expect(await storedHash(id), label).toBe(`${tag}${fixture.hash}`);
        // Threat: an imported format that accepts any password (a verifier that compares nothing).
        await expectError(await signIn(email, `${fixture.password}!`), 401, "invalid-email-password");
        expect(await storedHash(id), label).toBe(`${tag}${fixture.hash}`);
        expect((await signIn(email, fixture.password)).status, label).toBe(200);
        // Threat: a leaked table keeps the other system's weaker hashes for ever. The first sign-in replaces them.
        expect(await storedHash(id), label).toMatch(/^\$argon2id\$v=19\$/);
        expect((await signIn(email, fixture.password)).status, label).toBe(200);
      }),
    );
    // Every format, four sign-ins each (scrypt and PBKDF2 among them, JS where WebCrypto refuses): seconds of
    // hashing on a busy machine.
  }, 30_000);

  it("where the runtime refuses WebCrypto's PBKDF2 count, the JS derivation verifies instead", async () => {
    // Threat: Cloudflare's runtime refuses PBKDF2 above a ceiling set by the account's CPU limit (100,000 at the
    // smallest; local workerd has none), so Django's 600,000 and more would lock every such user out in production.
    // The refusal is put back here as the runtime answers it (a NotSupportedError before any work), at a ceiling below
    // the fixtures' 1,000 iterations so the JS derivation stays cheap in the suite.
    const pbkdf2 = FIXTURES.filter((f) => f.hasher.startsWith("pbkdf2_"));
    expect(pbkdf2).toHaveLength(6);
    const users = await Promise.all(pbkdf2.map((f) => importedUser(f.hasher, f.hash)));
    await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    const native = crypto.subtle.deriveBits.bind(crypto.subtle);
    const refused: number[] = [];
    const spy = vi.spyOn(crypto.subtle, "deriveBits").mockImplementation(async (algorithm, key, length) => {
      const { name, iterations } = algorithm as { name: string; iterations?: number };
      if (name === "PBKDF2" && iterations! > 500) {
        refused.push(iterations!);
        throw new DOMException(
          `Pbkdf2 failed: iteration counts above 500 are not supported`,
          "NotSupportedError",
        );
      }
      return native(algorithm, key, length);
    });
    try {
      await Promise.all(
        pbkdf2.map(async (f, i) => {
          await expectError(await signIn(users[i]!.email, `${f.password}!`), 401, "invalid-email-password");
          expect((await signIn(users[i]!.email, f.password)).status, f.tool).toBe(200);
          expect(await storedHash(users[i]!.id), f.tool).toMatch(/^\$argon2id\$/);
        }),
      );
    } finally {
      spy.mockRestore();
    }
    expect(refused).toEqual(pbkdf2.flatMap(() => [1000, 1000]));
  });

  const fixture = (hasher: string) =>
    FIXTURES.find((f) => f.hasher === hasher && !f.hash.startsWith("$pbkdf2"))!.hash;
  const firebaseFields = fixture("scrypt_firebase").split("$");
  const firebaseAt = (rounds: number, memCost: number) =>
    [...firebaseFields.slice(0, 4), rounds, memCost].join("$");

  // Threat: a hash whose parameters name gigabytes or hours holds one sign-in that long (a CPU and memory bomb behind
  // a single request); a malformed or misnamed one is a user who can never sign in. Each is refused at import, named.
  const refusals: [string, unknown, string, RegExp][] = [
    ["an unknown hasher", "sha3_512", "abc", /passwordHasher/],
    [
      "no hasher: today's bcrypt only",
      undefined,
      fixture("pbkdf2_sha256"),
      /unknown format \(Nhost writes bcrypt/,
    ],
    ["malformed PBKDF2", "pbkdf2_sha256", "pbkdf2_sha256$1000$salt$not base64!", /malformed PBKDF2/],
    ["malformed Firebase", "scrypt_firebase", "only$three$fields", /malformed Firebase scrypt/],
    ["malformed PHPass", "phpass", "$P$Bshort", /malformed PHPass/],
    ["malformed MD5", "md5", "d41d8cd98f00b204e9800998ecf8427", /malformed MD5 hash/],
    ["a misnamed format", "argon2i", fixture("argon2id"), /this hash is argon2id/],
    ["bcrypt above cost 12", "bcrypt", `$2b$13$${"a".repeat(53)}`, /bcrypt cost 13 is above 12/],
    ["bcrypt_sha256 above 12", "bcrypt_sha256", `bcrypt_sha256$$2b$14$${"a".repeat(53)}`, /bcrypt cost 14/],
    [
      "PBKDF2 above 1,200,000",
      "pbkdf2_sha256",
      fixture("pbkdf2_sha256").replace("$1000$", "$1200001$"),
      /iterations 1200001 are above 1200000/,
    ],
    [
      "scrypt above 32 MiB",
      "scrypt",
      fixture("scrypt").replace("ln=10,r=8", "ln=16,r=8"),
      /64 MiB, above 32 MiB/,
    ],
    ["Firebase scrypt above 32 MiB", "scrypt_firebase", firebaseAt(8, 16), /64 MiB, above 32 MiB/],
    [
      "argon2i above 46 MiB",
      "argon2i",
      fixture("argon2i").replace("m=64,", "m=65536,"),
      /argon2 cost m=65536/,
    ],
    [
      "PHPass above 2^19 rounds",
      "phpass",
      fixture("phpass").replace(/^\$P\$./, "$P$K"),
      /2\^22 are above 2\^19/,
    ],
  ];

  it("a malformed, misnamed or too costly hash, or an unknown hasher, is refused at import with its reason; nothing is written", async () => {
    const users = await Promise.all(refusals.map(([, hasher, hash]) => importedUser(hasher, hash)));
    const { results } = await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    for (const [i, [label, , , reason]] of refusals.entries()) {
      expect(results[i]!.outcome, label).toBe("skipped");
      expect(results[i]!.reasons, label).toEqual([
        { table: "auth.users", id: users[i]!.id, reason: expect.stringMatching(reason) },
      ]);
      expect(await storedHash(users[i]!.id), label).toBeUndefined();
    }
  });

  it("a stored hash above the bounds is refused like a wrong password at sign-in, and left as it is", async () => {
    // Threat: a row that passed an import under a higher bound (or was written by hand) still can't hold a sign-in.
    const user = await importedUser("pbkdf2_sha256", fixture("pbkdf2_sha256"));
    await importUsers(svc, [user.bundle]);
    const bomb = fixture("pbkdf2_sha256").replace("$1000$", "$900000000$");
    await userD1(user.id)
      .prepare("UPDATE users SET password_hash = ? WHERE id = ?")
      .bind(bomb, user.id)
      .run();
    await expectError(await signIn(user.email, python.password), 401, "invalid-email-password");
    expect(await storedHash(user.id)).toBe(bomb);
  });
});
