// Measures what one user costs in D1 (docs/scaling.md, "Past one D1 database"): applies the real migrations to a
// local D1 database (Miniflare, the same SQLite as `wrangler dev`), writes a population of users with a typical mix
// of rows, each phase with the statements the service issues (so the triggers of migration 0020 write their event
// rows and sequence rows, and the drain claims and deletes the outbox as src/events/outbox.ts does), and reads the
// database size D1 reports (`meta.size_after`, page_count × 4096, the figure D1 limits at 10 GB) before and after each
// phase. Then it replays each hot write path once per user of a small sample and sums D1's `rows_written`.
//
//   node scripts/measure-row-bytes.mjs [--users 10000] [--signins-per-month 30] [--seed 1]
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "10000" },
    "signins-per-month": { type: "string", default: "30" },
    seed: { type: "string", default: "1" },
  },
});
const USERS = Number(args.users);
const SIGNINS = Number(args["signins-per-month"]);

// A small seeded generator (sfc32), so two runs write the same bytes.
let [a, b, c, d] = [0x9e3779b9, 0x243f6a88, 0xb7e15162, Number(args.seed) >>> 0];
function random() {
  a >>>= 0;
  b >>>= 0;
  c >>>= 0;
  d >>>= 0;
  const t = (a + b + d) >>> 0;
  d = (d + 1) >>> 0;
  a = b ^ (b >>> 9);
  b = (c + (c << 3)) >>> 0;
  c = ((c << 21) | (c >>> 11)) + t;
  return t / 4294967296;
}
const hex = (n) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[Math.floor(random() * 4)]}${hex(3)}-${hex(12)}`;
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const b64 = (bytes) =>
  Array.from({ length: Math.ceil((bytes * 4) / 3) }, () => B64[Math.floor(random() * 64)]).join("");

// Values shaped as the service writes them (src/lib/password.ts, src/auth/new-sessions.ts, src/audit/record.ts…).
const UA = [
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "MyApp/3.2.1 (iPhone; iOS 18.1; Scale/3.00) CFNetwork/1568.100.1 Darwin/24.0.0",
];
const ip = () =>
  random() < 0.6
    ? `${Math.floor(random() * 223) + 1}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`
    : `2a02:${hex(4)}:${hex(4)}:${hex(4)}:${hex(4)}:${hex(4)}:${hex(4)}:${hex(4)}`;
const passwordHash = () => `$argon2id$v=19$m=19456,t=2,p=1$${b64(16)}$${b64(32)}`;
/** ~200 bytes of app metadata. */
const metadata = () =>
  JSON.stringify({
    plan: "free",
    referrer: `newsletter-${hex(6)}`,
    preferences: { theme: "dark", newsletter: random() < 0.5, language: "en" },
    onboarding: { step: 4, completedAt: "2026-11-20T10:11:12.000Z" },
    company: `Example ${hex(10)} Ltd`,
  });
let eventSequence = 0;
let providerAccounts = 0;
const eventId = (at) =>
  `${at.toString().padStart(14, "0")}-${(++eventSequence % 1_000_000).toString().padStart(6, "0")}-${hex(8)}`;
const NOW = 1_795_000_000_000;

const mf = new Miniflare(
  convertV4MiniflareOptions({
    log: new Log(LogLevel.WARN),
    modules: true,
    script: "export default { fetch() { return new Response(null, { status: 404 }) } }",
    d1Databases: ["DB"],
    compatibilityDate: "2026-11-01",
  }),
);
const db = await mf.getD1Database("DB");
for (const file of readdirSync("migrations")
  .filter((f) => f.endsWith(".sql"))
  .sort()) {
  const statements = readFileSync(join("migrations", file), "utf8")
    .split("--> statement-breakpoint")
    .map((s) => s.trim())
    .filter(Boolean);
  await db.batch(statements.map((sql) => db.prepare(sql)));
}

/** A statement as the service issues it; run prepared (to read D1's meta) or inlined (bulk, through `exec`). */
const q = (sql, ...params) => ({ sql, params });
const prepared = (s) => db.prepare(s.sql).bind(...s.params);
const literal = (v) =>
  v === null ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
function inline(s) {
  let i = 0;
  return s.sql.replace(/\?/g, () => literal(s.params[i++])).replace(/\s+/g, " ");
}
/** The drain of src/events/outbox.ts: one claim (UPDATE … RETURNING) and one DELETE per page of 100. */
const drain = () => [
  q(
    `UPDATE event_outbox SET claimed_until = ? WHERE position IN (SELECT position FROM event_outbox
     WHERE claimed_until IS NULL OR claimed_until < ? ORDER BY position LIMIT 100) RETURNING *`,
    NOW + 60_000,
    NOW,
  ),
  q("DELETE FROM event_outbox WHERE claimed_until IS NOT NULL"),
];

const ops = {
  signUp: (u, verified = 1) => [
    q(
      `INSERT INTO users (id, created_at, updated_at, disabled, display_name, avatar_url, locale, email, email_verified,
       phone_number, password_hash, default_role, roles, is_anonymous, metadata)
       VALUES (?, ?, ?, 0, ?, '', 'en', ?, ?, NULL, ?, 'user', '["user","me"]', 0, ?) ON CONFLICT DO NOTHING RETURNING *`,
      u.id,
      NOW,
      NOW,
      u.email,
      u.email,
      verified,
      passwordHash(),
      metadata(),
    ),
  ],
  audit: (u, type, detail) => [
    q(
      "INSERT INTO audit_events (id, at, type, user_id, ip, user_agent, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
      eventId(NOW),
      NOW,
      type,
      u.id,
      ip(),
      UA[0],
      JSON.stringify(detail),
    ),
  ],
  /** createSession: one batch (the session, `users.last_seen`). */
  session: (u, ua) => [
    q(
      `INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at, user_agent, locator, method)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'email-password')`,
      uuid(),
      u.id,
      NOW,
      NOW,
      NOW + 2_592_000_000,
      ua,
      hex(6),
    ),
    q("UPDATE users SET last_seen = ? WHERE id = ?", NOW, u.id),
  ],
  provider: (u) => [
    q(
      "INSERT INTO user_providers (id, user_id, provider, provider_user_id, created_at, updated_at) VALUES (?, ?, 'github', ?, ?, ?)",
      uuid(),
      u.id,
      // Eight digits, like a GitHub user id; unique (one identity per provider account).
      String(12_000_000 + ((providerAccounts++ * 7_919) % 88_000_000)),
      NOW,
      NOW,
    ),
  ],
  securityKey: (u) => [
    q(
      `INSERT INTO security_keys (id, user_id, credential_id, public_key, counter, transports, nickname, created_at)
       VALUES (?, ?, ?, ?, 0, '["internal","hybrid"]', 'MacBook Touch ID', ?)`,
      uuid(),
      u.id,
      b64(32),
      b64(77),
      NOW,
    ),
  ],
  pat: (u) => [
    q(
      "INSERT INTO personal_access_tokens (id, user_id, token_hash, created_at, expires_at, metadata) VALUES (?, ?, ?, ?, ?, ?)",
      uuid(),
      u.id,
      hex(64),
      NOW,
      NOW + 31_536_000_000,
      '{"name":"ci deploy"}',
    ),
  ],
  /** src/storage/upload.ts: reserve, record what was stored, publish (the publish fires `file.uploaded`). */
  upload: (u) => {
    const id = uuid();
    return [
      q(
        `INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, uploaded_by_user_id,
         created_at, updated_at) VALUES (?, 'default', ?, 0, 'application/octet-stream', '""', ?, 0, ?, ?, ?)
         ON CONFLICT DO NOTHING RETURNING *`,
        id,
        `IMG_2026${hex(4)}_${hex(6)}.jpg`,
        `default/${id}`,
        u.id,
        NOW,
        NOW,
      ),
      q(
        `UPDATE files SET size = ?, mime_type = 'image/jpeg', etag = ?, image_width = 4032, image_height = 3024,
         metadata = NULL WHERE id = ? RETURNING *`,
        Math.floor(random() * 4_000_000),
        `"${hex(32)}"`,
        id,
      ),
      q("UPDATE files SET is_uploaded = 1, updated_at = ? WHERE id IN (?)", NOW + 1, id),
    ];
  },
  ticket: (u) => [
    q(
      `INSERT INTO tickets (user_id, type, ticket_hash, expires_at, code_challenge) VALUES (?, 'verifyEmail', ?, ?, NULL)
       ON CONFLICT (user_id, type) DO UPDATE SET ticket_hash = excluded.ticket_hash, expires_at = excluded.expires_at`,
      u.id,
      hex(64),
      NOW + 2_592_000_000,
    ),
  ],
  verify: (u) => [
    q(
      "DELETE FROM tickets WHERE user_id = ? AND type = 'verifyEmail' RETURNING user_id, code_challenge",
      u.id,
    ),
    q(
      "UPDATE users SET email_verified = 1, email_verified_at = ?, updated_at = ? WHERE id = ? AND email_verified = 0 RETURNING *",
      NOW,
      NOW,
      u.id,
    ),
  ],
  touch: (u) => [
    q(
      "UPDATE sessions SET last_used_at = ?, expires_at = ? WHERE id = ?",
      NOW,
      NOW + 2_592_000_000,
      u.session,
    ),
  ],
  signOut: (u) => [q("DELETE FROM sessions WHERE id = ?", u.session)],
};

async function size() {
  return (await db.prepare("SELECT 1").run()).meta.size_after;
}
async function inChunks(statementsOf, per = 2000) {
  let pending = [];
  for (let i = 0; i < USERS; i++) {
    pending.push(...statementsOf(people[i]));
    if (pending.length >= per || i === USERS - 1) {
      // `exec` runs one statement a line: the same statements, without a round trip each.
      await db.exec(pending.map(inline).join("\n"));
      for (;;) {
        const [claimed] = await db.batch(drain().map(prepared));
        if (claimed.results.length === 0) break;
      }
      pending = [];
    }
  }
}

const people = Array.from({ length: USERS }, (_, i) => ({
  id: uuid(),
  email: `user${i}.${hex(6)}@example.com`,
}));
const phases = [
  ["user row, its event_sequences row", (u) => ops.signUp(u)],
  ["2 sessions", (u) => [...ops.session(u, UA[0]), ...ops.session(u, UA[1])]],
  ["1 provider identity", ops.provider],
  ["1 security key", ops.securityKey],
  ["1 personal access token", ops.pat],
  ["5 file records", (u) => [1, 2, 3, 4, 5].flatMap(() => ops.upload(u))],
  [
    `audit: a month at ${SIGNINS} sign-ins + 4 account events`,
    (u) => [
      ...ops.audit(u, "signup", { method: "email-password", anonymous: false }),
      ...ops.audit(u, "provider.linked", { provider: "github" }),
      ...ops.audit(u, "security-key.added", { nickname: "MacBook Touch ID" }),
      ...ops.audit(u, "pat.created", { expiresAt: "2027-11-25T00:00:00.000Z" }),
      ...Array.from({ length: SIGNINS }, () =>
        ops.audit(u, "signin.success", { method: "email-password", sessionId: uuid() }),
      ).flat(),
    ],
  ],
];

const empty = await size();
let before = empty;
const rows = [];
for (const [what, statementsOf] of phases) {
  await inChunks(statementsOf);
  const after = await size();
  rows.push([what, after - before]);
  before = after;
}
const pad = (s, n) => String(s).padEnd(n);
const fmt = (n) => Math.round(n).toLocaleString("en-US");
console.log(`D1 size, migrated and empty: ${fmt(empty)} bytes; ${fmt(USERS)} users written\n`);
console.log(`${pad("part", 48)} ${pad("bytes per user", 15)} bytes per 10k users`);
for (const [what, bytes] of rows)
  console.log(`${pad(what, 48)} ${pad(fmt(bytes / USERS), 15)} ${fmt((bytes / USERS) * 10_000)}`);
const total = before - empty;
console.log(`${pad("total", 48)} ${pad(fmt(total / USERS), 15)} ${fmt((total / USERS) * 10_000)}`);
const auditBytes = rows.at(-1)[1] / USERS / (SIGNINS + 4);
console.log(
  `\nper audit row: ${fmt(auditBytes)} bytes; outbox rows left: ${(await db.prepare("SELECT count(*) n FROM event_outbox").first()).n}`,
);

// The directory the sharding plan proposes (docs/scaling.md): SHA-256 of the kind and normalised key → user id. Not
// in the migrations yet; measured here on its own, 3 entries a user (email, provider identity, PAT).
await db.exec(
  [
    "CREATE TABLE directory (key BLOB PRIMARY KEY, user_id TEXT NOT NULL, state TEXT NOT NULL, claimed_at INTEGER NOT NULL) WITHOUT ROWID;",
    "CREATE INDEX directory_user ON directory (user_id);",
    "CREATE INDEX directory_pending ON directory (claimed_at) WHERE state = 'pending';",
  ].join("\n"),
);
const beforeDirectory = await size();
await inChunks((u) =>
  ["email", "provider", "pat"].map(() =>
    q(
      "INSERT INTO directory (key, user_id, state, claimed_at) VALUES (unhex(?), ?, 'live', ?)",
      hex(64),
      u.id,
      NOW,
    ),
  ),
);
const directoryBytes = (await size()) - beforeDirectory;
console.log(
  `directory (proposed), 3 entries a user: ${fmt(directoryBytes / USERS)} bytes per user, ${fmt((directoryBytes / USERS) * 10_000)} per 10k users`,
);

// Rows written (D1's billing unit: each row and each index entry a write touches) by each hot write path, summed over
// its statements as D1 meta reports them, averaged over a sample of fresh users. `commits`: statements or batches the
// primary serialises (a batch is one transaction); `statements`: every SQL statement, triggers' not counted.
const SAMPLE = 100;
const paths = {
  "sign-up, verification off (user, session, audit, drain)": (u) => [
    ops.signUp(u),
    ops.session(u, UA[0]),
    ops.audit(u, "signup", {}),
    ...drain().map((s) => [s]),
  ],
  "sign-up, verification on (user, ticket, audit, drain)": (u) => [
    ops.signUp(u, 0),
    ops.ticket(u),
    ops.audit(u, "signup", {}),
    ...drain().map((s) => [s]),
  ],
  "verification link (ticket, verified, session, audit, drain)": (u) => [
    ...ops.verify(u).map((s) => [s]),
    ops.session(u, UA[0]),
    ops.audit(u, "signin.success", {}),
    ...drain().map((s) => [s]),
  ],
  "sign-in (session batch, audit, drain)": (u) => [
    ops.session(u, UA[0]),
    ops.audit(u, "signin.success", {}),
    ...drain().map((s) => [s]),
  ],
  "refresh, hourly touch": (u) => [ops.touch(u)],
  "sign-out (session, drain)": (u) => [ops.signOut(u), ...drain().map((s) => [s])],
  "upload, one file (reserve, record, publish, drain)": (u) => [
    ...ops.upload(u).map((s) => [s]),
    ...drain().map((s) => [s]),
  ],
};
console.log(`\n${pad("write path", 62)} ${pad("commits", 8)} ${pad("statements", 11)} rows written`);
const sample = Array.from({ length: SAMPLE }, (_, i) => ({
  id: uuid(),
  email: `sample${i}.${hex(6)}@example.com`,
}));
for (const u of sample) {
  await db.batch(ops.signUp(u).map(prepared));
  await db.batch(ops.session(u, UA[0]).map(prepared));
  u.session = (await db.prepare("SELECT id FROM sessions WHERE user_id = ?").bind(u.id).first()).id;
}
await db.batch(drain().map(prepared));
await db.batch(drain().map(prepared));
const unverified = [];
for (const [what, stepsOf] of Object.entries(paths)) {
  let written = 0;
  let commits = 0;
  let statements = 0;
  for (const [i, u] of sample.entries()) {
    let subject = u;
    if (what.startsWith("sign-up")) subject = { id: uuid(), email: `x${hex(10)}@example.com` };
    if (what.startsWith("sign-up, verification on")) unverified.push(subject);
    // The link is followed by the users who signed up with verification on, their ticket in place.
    if (what.startsWith("verification")) subject = unverified[i];
    for (const step of stepsOf(subject)) {
      const results = await db.batch(step.map(prepared));
      commits += 1;
      statements += step.length;
      written += results.reduce((sum, r) => sum + r.meta.rows_written, 0);
    }
    if (what.startsWith("sign-out")) await db.batch(ops.session(u, UA[0]).map(prepared));
    if (what.startsWith("sign-out"))
      u.session = (await db.prepare("SELECT id FROM sessions WHERE user_id = ?").bind(u.id).first()).id;
  }
  console.log(
    `${pad(what, 62)} ${pad(commits / SAMPLE, 8)} ${pad(statements / SAMPLE, 11)} ${fmt(written / SAMPLE)}`,
  );
}
await mf.dispose();
