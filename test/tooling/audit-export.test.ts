// `npm run admin -- audit export` (scripts/audit-export/): the real command against a small HTTP server standing in
// for GET /admin/audit (the filters themselves are test/audit-export/otlp.test.ts's and test/admin/audit-filters.test.ts's),
// its OCSF output validated against the JSON Schema of the Authentication (3002) and Account Change (3001) classes,
// derived from the OCSF 1.2.0 release files (test/tooling/ocsf-schema.ts, test/fixtures/ocsf-1.2.0/).
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ocsfClassSchema } from "./ocsf-schema";

const run = promisify(execFile);
const SECRET = "audit-export-secret";

const actors = [
  { type: "user" },
  { type: "admin", name: "ada@support" },
  { type: "impersonator", name: "grace@support" },
  { type: "worker", name: "billing-worker" },
  { type: "scim", name: "org_123" },
  { type: "system" },
];
/** One event of every type the OCSF export maps, under every actor in turn, and one type it does not. */
const TYPES = [
  "signin.success",
  "signin.failure",
  "signin.failure.repeated",
  "oauth2.assertion",
  "signin.risk",
  "admin.console.sign-in",
  "admin.console.sign-in-failed",
  "elevation",
  "refresh.replay",
  "session.revoke",
  "session.revoke-others",
  "admin.session.revoke",
  "admin.sessions.revoke-all",
  "admin.console.sign-out",
  "admin.console.session-end",
  "signup",
  "admin.user.create",
  "password.change",
  "password.reset",
  "admin.user.send-reset",
  "admin.user.disable",
  "account.delete",
  "admin.user.delete",
  "signin.locked",
  "mfa.enabled",
  "security-key.added",
  "mfa.disabled",
  "admin.security-key.delete",
  "signin.unlocked",
  "admin.user.unlock",
  "admin.user.update",
  "email.change",
  "phone.change",
  "provider.linked",
  "provider.unlinked",
  "pat.created",
  "pat.revoked",
  "scim.user.create",
  "scim.user.replace",
  "scim.user.update",
  "scim.user.delete",
];
const REFUSED_AS_RISKY = {
  outcome: "failure",
  reason: "risk-refused",
  detail: {
    method: "email-password",
    level: "high",
    reasons: ["impossible-travel", "new-country-new-device"],
    decision: "refuse",
    by: "policy",
    signals: { device: "new", newCountry: true, travel: { impossible: true, km: 16_000, fromCountry: "DE" } },
  },
};
const events = [...TYPES, "hook.called"].map((type, i) => ({
  id: `${String(1_795_000_000_000 - i).padStart(14, "0")}-000001-abcdef${String(i).padStart(2, "0")}`,
  at: new Date(1_795_000_000_000 - i * 1000).toISOString(),
  type,
  // Every third event names no user (a failed sign-in of an unknown address; an admin's action on no one).
  ...(i % 3 === 0 ? {} : { userId: crypto.randomUUID() }),
  actor: actors[i % actors.length],
  outcome: /failure|failed|replay|locked/.test(type) ? "failure" : "success",
  reason: /failure/.test(type) ? "invalid-email-password" : type,
  ...(i % 2 === 0 ? { ip: "2001:db8::1", userAgent: "Mozilla/5.0" } : {}),
  detail: i % 4 === 0 ? { email: `someone-${i}@example.com`, method: "email-password" } : { n: i },
  // The risk gate's refusal as src/risk/assess.ts records it.
  ...(type === "signin.risk" ? REFUSED_AS_RISKY : {}),
}));

let server: Server;
let url: string;
const asked: URLSearchParams[] = [];

beforeAll(async () => {
  // GET /admin/audit as the service answers it, in pages of 7 whatever `limit` (a server may give fewer), with an
  // opaque cursor; 401 without the secret.
  server = createServer((request, response) => {
    const query = new URL(request.url ?? "/", "http://x").searchParams;
    asked.push(query);
    if (request.headers["x-hasura-admin-secret"] !== SECRET) {
      response.writeHead(401, { "content-type": "application/json" });
      return response.end(JSON.stringify({ status: 401, error: "unauthorized", message: "wrong secret" }));
    }
    const start = query.get("cursor") ? Number(Buffer.from(query.get("cursor")!, "base64url").toString()) : 0;
    const items = events.slice(start, start + 7);
    const next = start + 7 < events.length ? Buffer.from(String(start + 7)).toString("base64url") : null;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ items, nextCursor: next }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const cli = (...args: string[]) =>
  run(process.execPath, ["scripts/admin.mjs", "audit", "export", ...args, "--server", url], {
    env: { ...process.env, ADMIN_SECRET: SECRET },
  });

// A Node process per run of the CLI: about a second on a quiet machine, several on a busy one.
const SLOW = 30_000;

describe("npm run admin -- audit export (contract operators.md §4: OCSF 1.2.0 classes 3002 and 3001)", () => {
  // Threat: an export a SIEM refuses (or worse, misreads) because a field is not what OCSF 1.2.0 says it is.
  it(
    "--format ocsf writes OCSF 1.2.0 Authentication and Account Change events that validate against the schema",
    async () => {
      const ajv = new Ajv({ allErrors: true, strict: false });
      const validators = {
        3001: ajv.compile(ocsfClassSchema("account_change")),
        3002: ajv.compile(ocsfClassSchema("authentication")),
      };
      const { stdout, stderr } = await cli(
        "--since",
        "2026-11-01",
        "--until",
        "2026-12-01T00:00:00Z",
        "--format",
        "ocsf",
      );
      const lines = stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toHaveLength(TYPES.length);
      for (const event of lines) {
        const validate = validators[event.class_uid as 3001 | 3002];
        expect(validate, `class ${event.class_uid}`).toBeDefined();
        expect(validate(event) ? [] : validate.errors, JSON.stringify(event)).toEqual([]);
        expect(event.type_uid).toBe((event.class_uid as number) * 100 + (event.activity_id as number));
      }
      // The schema has teeth: an attribute OCSF does not define, a required one missing, a wrong type, an activity
      // of another class, a user with none of account, name or uid, each refused.
      const sample = lines.find((event) => event.class_uid === 3002)!;
      for (const broken of [
        { ...sample, actor_name: "x" },
        { ...sample, user: undefined },
        { ...sample, time: "yesterday" },
        { ...sample, activity_id: 7 },
        { ...sample, user: { email_addr: "a@example.com" } },
        { ...sample, metadata: { version: "1.2.0" } },
        { ...sample, service: undefined },
      ]) {
        expect(validators[3002](JSON.parse(JSON.stringify(broken))), JSON.stringify(broken)).toBe(false);
      }
      const byMessage = Object.fromEntries(lines.map((event) => [event.message, event]));
      expect(byMessage["signin.failure"]).toMatchObject({ class_uid: 3002, activity_id: 1, status_id: 2 });
      // Threat: a refused sign-in a SIEM files as an ordinary event, without its level or why (the export's only
      // record of the gate's decision).
      expect(byMessage["signin.risk"]).toMatchObject({
        class_uid: 3002,
        activity_id: 99,
        activity_name: "Risk Assessment",
        severity_id: 4,
        status_id: 2,
        status_code: "risk-refused",
        status_detail: "risk high: refuse by policy (impossible-travel, new-country-new-device)",
        enrichments: [
          {
            name: "risk_level",
            value: "high",
            data: { decision: "refuse", signals: REFUSED_AS_RISKY.detail.signals },
          },
        ],
      });
      expect(byMessage["password.change"]).toMatchObject({ class_uid: 3001, activity_id: 3, status_id: 1 });
      expect(byMessage["session.revoke"]).toMatchObject({ class_uid: 3002, activity_id: 2 });
      const impersonated = lines.find(
        (event) => (event.unmapped as { actor: { type: string } }).actor.type === "impersonator",
      );
      expect(impersonated?.actor).toMatchObject({ user: { name: "grace@support", type_id: 2 } });
      expect(stderr).toMatch(/41 events written; 1 of types outside OCSF/);
      // Every page asked with the time range, and the cursor of the page before.
      expect(asked.at(-1)!.get("since")).toBe("2026-11-01");
      expect(asked.at(-1)!.get("until")).toBe("2026-12-01T00:00:00Z");
      expect(asked.at(-1)!.get("limit")).toBe("500");
      expect(asked.filter((query) => query.get("cursor")).length).toBeGreaterThanOrEqual(5);
    },
    SLOW,
  );

  it(
    "--format jsonl (the default) writes the admin API's events, every type, one a line",
    async () => {
      const { stdout } = await cli("--since", "2026-11-01");
      expect(
        stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line)),
      ).toEqual(events);
    },
    SLOW,
  );

  // Threat: a typo exporting the whole log, or nothing, without a word.
  it(
    "refuses a missing or malformed --since, an unknown format or actor, before calling the server",
    async () => {
      const before = asked.length;
      for (const [args, message] of [
        [[], /needs --since/],
        [["--since", "yesterday"], /--since yesterday is not ISO 8601/],
        [["--since", "2026-11-01", "--until", "soon"], /--until soon is not ISO 8601/],
        [["--since", "2026-11-01", "--format", "xml"], /--format must be one of jsonl, ocsf/],
        [["--since", "2026-11-01", "--actor", "root"], /--actor must be one of/],
      ] as const) {
        const failed = await cli(...args).then(
          () => null,
          (error: { code: number; stderr: string }) => error,
        );
        expect(failed?.code, args.join(" ")).toBe(2);
        expect(failed?.stderr).toMatch(message);
      }
      expect(asked.length).toBe(before);
    },
    SLOW,
  );
});
