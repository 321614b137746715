import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectContractError, NO_VERIFICATION, service, signUp } from "../helpers";

/** The admin API under malformed and hostile input: a 4xx in the contract's shape, never a 5xx. */
const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

const huge = "x".repeat(20_000);
const BODIES: [string, string][] = [
  ["malformed JSON", '{"email": '],
  ["a JSON array", "[]"],
  ["null", "null"],
  [
    "wrong types",
    JSON.stringify({ email: 42, password: ["a"], disabled: "yes", roles: "admin", metadata: [] }),
  ],
  ["huge strings", JSON.stringify({ email: `${huge}@example.com`, displayName: huge, defaultRole: huge })],
  ["deep metadata", JSON.stringify({ metadata: JSON.parse(`${'{"a":'.repeat(50)}1${"}".repeat(50)}`) })],
  ["prototype keys", '{"__proto__": {"disabled": true}, "constructor": {"prototype": {}}}'],
  ["unknown fields", JSON.stringify({ email: "a@example.com", isAdmin: true, passwordHash: "x" })],
];

describe("admin API: bad input never causes a 5xx", () => {
  it("bodies of POST /users and PATCH /users/{id}", async () => {
    const { user } = await signUp(svc);
    for (const [method, path] of [
      ["POST", "/admin/users"],
      ["PATCH", `/admin/users/${user.id}`],
    ]) {
      for (const [label, body] of BODIES) {
        const response = await svc.request(method!, path!, {
          body,
          headers: { ...ADMIN, "content-type": "application/json" },
        });
        await expectContractError(response, `${method} ${path} ${label}`);
      }
    }
  });

  it("hostile ids, cursors, limits and searches", async () => {
    for (const path of [
      `/admin/users/${huge}`,
      "/admin/users/'%20OR%201=1--",
      `/admin/users?cursor=${huge}`,
      "/admin/users?cursor=W10",
      "/admin/users?cursor=WyJ4IiwxXQ",
      "/admin/users?limit=0",
      "/admin/users?limit=-1",
      "/admin/users?limit=abc",
      `/admin/users?search=${huge}`,
      `/admin/users/${crypto.randomUUID()}/sessions?cursor=%00`,
      "/admin/audit?limit=100000",
      `/admin/audit?type=${huge}`,
    ]) {
      const response = await svc.request("GET", path, { headers: ADMIN });
      await expectContractError(response, path.slice(0, 60));
    }
    for (const [method, path] of [
      ["DELETE", `/admin/sessions/${huge.slice(0, 2000)}`],
      ["DELETE", "/admin/keys/%00"],
      ["DELETE", `/admin/users/${crypto.randomUUID()}/sessions`],
    ]) {
      await expectContractError(
        await svc.request(method!, path!, { headers: ADMIN }),
        `${method} ${path!.slice(0, 40)}`,
      );
    }
    // Every length the schema allows (D1 refuses LIKE patterns over 50 bytes: 49 characters and more were a 500), and
    // a long one finds what it names.
    const local = "l".repeat(60);
    const domain = `${"d".repeat(60)}.example.com`;
    const { user } = await signUp(svc, `${local}@${domain}`);
    for (const length of [48, 49, 50, 100, 200, 254]) {
      const term = `${local}@${domain}`.slice(0, length).padEnd(length, "z");
      const found = await svc.request("GET", `/admin/users?search=${encodeURIComponent(term)}`, {
        headers: ADMIN,
      });
      expect(found.status, `search of ${length} characters`).toBe(200);
      const ids = ((await found.json()) as { items: { id: string }[] }).items.map((item) => item.id);
      if (length <= local.length + 1 + domain.length) expect(ids, `search of ${length}`).toEqual([user.id]);
      else expect(ids, `search of ${length}`).toEqual([]);
    }
    await expectContractError(
      await svc.request("GET", `/admin/users?search=${"x".repeat(255)}`, { headers: ADMIN }),
      "search of 255",
    );
    // A search that looks like SQL is just text.
    const sqlish = await svc.request("GET", "/admin/users?search=%27%20OR%201%3D1--", { headers: ADMIN });
    expect(sqlish.status).toBe(200);
    expect(((await sqlish.json()) as { items: unknown[] }).items).toEqual([]);
  });
});
