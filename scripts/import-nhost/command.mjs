// `npm run admin -- import-nhost`: moves a Nhost project in (contract move-in §2). It reads Nhost's Postgres directly
// (read-nhost.mjs) and writes through the service's admin import API (api.mjs, wire /tmp/issue29/wire.md), so the
// same command imports into `npm start`'s local service and into a deployment. It keeps no state of its own: the
// server remembers what earlier runs wrote (its ledger), so a run interrupted and started again, or a delta run
// just before the cut-over, ends in the same state as one clean run.
//
// The order of a run:
//   1. removals: what earlier runs imported and Nhost no longer has (files, users, buckets). First, so that a user
//      deleted in Nhost and signed up again with the same email is gone here before the new one comes in.
//   2. buckets, 3. users (each with their roles, providers, security keys and live refresh tokens), 4. rows whose user
//      is missing (reported), 5. files (records, then the bytes of those the service asks for).
//   6. `POST …/completed` with the counts (not in a dry run), then the report.
import { stat } from "node:fs/promises";
import { completedReport, countOutcome } from "../import/outcomes.mjs";
import { importApi } from "./api.mjs";
import { batchSender } from "./batches.mjs";
import {
  bucketRecord,
  directorySource,
  eachLimited,
  fileRecord,
  SourceError,
  storageApiSource,
  uploadFile,
} from "./files.mjs";
import { connectNhost, redactUrl } from "./read-nhost.mjs";
import { countGone, emptiedInNhost, MASS_REMOVAL, removeGone } from "./removals.mjs";
import { Progress, Report } from "./report.mjs";
import { parseEncryptionKey } from "./totp.mjs";
import { buildBundle, bundleRows, groupByUser } from "./user-bundles.mjs";

/** Files uploaded at once: enough to hide latency, few enough not to flood either side. */
const UPLOADS_AT_ONCE = 4;

export const importNhost = {
  summary:
    "move a Nhost project in: users, sessions, security keys, buckets and files (idempotent; delta runs)",
  usage:
    "import-nhost [--database-url postgres://USER@HOST:PORT/DB]\n" +
    "    [--files-dir DIR | --files-from https://<old storage>/v1] [--dry-run] [--allow-mass-removal]\n\n" +
    "  Secrets come from the environment, never from flags (npm prints the command line it runs):\n" +
    "  NHOST_DATABASE_URL          the Nhost project's Postgres, postgres://USER:PASS@HOST:PORT/DB; read only\n" +
    "  NHOST_ENCRYPTION_KEY        Nhost's AUTH_ENCRYPTION_KEY (hex), to read encrypted TOTP secrets; without it,\n" +
    "                              users with TOTP are listed and must have their MFA reset by an admin\n" +
    "  NHOST_ADMIN_SECRET          the old project's admin secret, for --files-from\n" +
    "  ADMIN_SECRET, AUTH_URL      this service's admin secret and auth URL (as every admin command)\n\n" +
    "  --database-url URL          instead of NHOST_DATABASE_URL, for a database without a password in its URL\n" +
    "                              (a local copy); a URL with a password is refused here\n" +
    "  --files-dir DIR             file contents named by file id, directly in DIR or in one sub-folder (the\n" +
    "                              root folder), as `aws s3 sync` of the Nhost bucket leaves them\n" +
    "  --files-from URL            or the old Nhost Storage API (its /v1 URL): GET URL/files/<id>\n" +
    "  --dry-run                   check everything and report, write nothing\n" +
    "  --allow-mass-removal        remove here more than half of what earlier runs imported, when Nhost no longer\n" +
    "                              has it (without it, such a run removes nothing: a wrong database?)\n\n" +
    "  Run it again at any time: it carries what changed in Nhost since (deleted there: deleted here) and\n" +
    "  leaves alone what changed here. Progress on stderr, the report on stdout (--json: one JSON object;\n" +
    "  `npm run -s admin -- …` keeps npm's own lines out of it).\n" +
    "  Exit 0: every row carried or knowingly left out (expired tokens, files never uploaded, rows kept here);\n" +
    "  1: some row not carried (listed), or a failure; 2: a usage error",
  options: {
    "database-url": { type: "string" },
    "files-dir": { type: "string" },
    "files-from": { type: "string" },
    // Refused (SECRET_FLAGS): declared so that the message names the variable to set instead.
    "nhost-admin-secret": { type: "string" },
    "nhost-encryption-key": { type: "string" },
    "dry-run": { type: "boolean", default: false },
    "allow-mass-removal": { type: "boolean", default: false },
  },
  run,
};

async function run(cli, values) {
  const options = await checkOptions(cli, values);
  cli.secret(); // fails now, before Nhost is read, when there is no admin secret for this server
  const dryRun = values["dry-run"];
  const nhost = await connectNhost(options.databaseUrl, (message) => cli.fail(message));
  const report = new Report({ dryRun, server: cli.server });
  const progress = new Progress();
  const api = importApi(cli);
  const run = {
    api,
    send: batchSender(api),
    nhost,
    report,
    progress,
    dryRun,
    allowMassRemoval: values["allow-mass-removal"],
    options,
    newBuckets: new Set(),
  };
  progress.note(
    `import-nhost: ${redactUrl(options.databaseUrl)} → ${cli.server}${dryRun ? " (dry run: nothing will be written)" : ""}`,
  );
  for (const table of await nhost.unindexedByUser())
    progress.note(
      `note: ${table} has no index on user_id, so every page of users scans it whole. On a copy of Nhost's ` +
        `database, \`CREATE INDEX ON ${table} (user_id)\` makes the run several times faster.`,
    );
  try {
    await removals(run);
    await buckets(run);
    await users(run);
    await dangling(run);
    await files(run);
    if (!dryRun) await run.api.post("/completed", { report: completedReport(report) });
  } catch (error) {
    // The old storage refusing its secret, the database connection lost, ids out of order: the run stops here. What
    // was written stays written, and the next run carries on from there.
    await nhost.close();
    cli.fail(
      `import-nhost stopped: ${error.message}\nWhat was imported stays; run the command again to carry on.`,
    );
  } finally {
    await nhost.close();
  }
  if (values.json) console.log(JSON.stringify(report.toJSON(), null, 2));
  else console.log(report.lines().join("\n"));
  process.exitCode = report.exitCode();
}

/**
 * The flags that would carry a secret, and the variable that carries it instead. npm prints the command line of every
 * script it runs (`> node scripts/admin.mjs import-nhost --nhost-encryption-key …`), so a secret given as a flag ended
 * up on the terminal, in CI logs, in shell history and in `ps`. Such a flag is refused; the message names the
 * variable and never repeats the value.
 */
const SECRET_FLAGS = {
  "nhost-encryption-key": "NHOST_ENCRYPTION_KEY",
  "nhost-admin-secret": "NHOST_ADMIN_SECRET",
};

/** Whether a connection URL holds a password (the part npm would print). */
export function hasPassword(url) {
  try {
    return new URL(url).password !== "";
  } catch {
    return /^[^:/]+:\/\/[^/@]*:[^/@]*@/.test(url);
  }
}

async function checkOptions(cli, values) {
  for (const [flag, variable] of Object.entries(SECRET_FLAGS))
    if (values[flag] !== undefined)
      cli.usageError(
        `takes no --${flag}: npm prints the command line, secret included. Set ${variable} in the environment`,
      );
  const flagUrl = values["database-url"];
  if (flagUrl !== undefined && hasPassword(flagUrl))
    cli.usageError(
      "--database-url holds a password, which npm prints with the command line: set NHOST_DATABASE_URL instead",
    );
  const databaseUrl = flagUrl ?? process.env.NHOST_DATABASE_URL;
  if (!databaseUrl)
    cli.usageError("needs NHOST_DATABASE_URL=postgres://USER:PASS@HOST:PORT/DB in the environment");
  if (!/^postgres(ql)?:\/\//.test(databaseUrl))
    cli.usageError(`${flagUrl ? "--database-url" : "NHOST_DATABASE_URL"} must be a postgres:// URL`);
  const filesDir = values["files-dir"];
  const filesFrom = values["files-from"];
  const adminSecret = process.env.NHOST_ADMIN_SECRET;
  if (filesDir && filesFrom) cli.usageError("takes --files-dir or --files-from, not both");
  let source = null;
  if (filesDir) {
    const found = await stat(filesDir).catch(() => null);
    if (!found?.isDirectory()) cli.usageError(`--files-dir ${filesDir} is not a directory`);
    source = directorySource(filesDir);
  }
  if (filesFrom) {
    if (!/^https?:\/\/[^/]/.test(filesFrom))
      cli.usageError("--files-from must be the old storage's http(s) URL");
    if (!adminSecret) cli.usageError("--files-from needs NHOST_ADMIN_SECRET in the environment");
    source = storageApiSource(filesFrom, adminSecret);
  }
  let totpKey = null;
  const key = process.env.NHOST_ENCRYPTION_KEY;
  if (key) {
    try {
      totpKey = parseEncryptionKey(key);
    } catch (error) {
      cli.usageError(error.message);
    }
  }
  return { databaseUrl, source, totpKey };
}

async function removals({ api, nhost, report, progress, dryRun, allowMassRemoval }) {
  // Files before buckets: a bucket goes only once its files have.
  const passes = [
    ["file", "storage.files", () => nhost.ids("storage.files")],
    ["user", "auth.users", () => nhost.ids("auth.users")],
    ["bucket", "storage.buckets", () => nhost.ids("storage.buckets", { text: true })],
  ];
  const emptied = [];
  for (const [kind, table, nhostIds] of passes)
    if (await emptiedInNhost(api, nhostIds(), kind)) emptied.push(table);
  // Either guard stops the run before anything is written: a wrong database's rows must not come in either.
  if (emptied.length > 0)
    throw new Error(
      `${emptied.join(" and ")}: empty in Nhost, but earlier runs imported rows: nothing was removed or written. ` +
        "Is --database-url the project imported before?",
    );
  if (!allowMassRemoval) {
    const mass = [];
    for (const [kind, table, nhostIds] of passes) {
      const { gone, total } = await countGone(api, nhostIds(), kind);
      if (gone > MASS_REMOVAL && gone * 2 > total) mass.push(`${gone} of ${total} imported rows of ${table}`);
    }
    if (mass.length > 0)
      throw new Error(
        `${mass.join(" and ")} are not in this database: nothing was removed or written. Is --database-url the ` +
          "project imported before? If they really were deleted in Nhost, run again with --allow-mass-removal.",
      );
  }
  for (const [kind, table, nhostIds] of passes) {
    await removeGone({ api, nhostIds: nhostIds(), kind, table, dryRun, report, progress });
    const { deleted, kept } = report.counts(table);
    if (deleted || kept) progress.done(`${table} (removals)`, report.counts(table));
  }
}

async function buckets(run) {
  const { nhost, report, progress } = run;
  const counts = report.counts("storage.buckets");
  for await (const page of nhost.buckets()) {
    counts.read += page.length;
    const results = await run.send("/buckets", "buckets", page.map(bucketRecord), { dryRun: run.dryRun });
    for (const result of results) {
      countOutcome(report, "storage.buckets", result);
      // A dry run creates no bucket: files planned into it must not be reported as lacking their bucket.
      if (run.dryRun && result.outcome === "imported") run.newBuckets.add(result.id);
    }
    progress.update("storage.buckets", counts);
  }
  progress.done("storage.buckets", counts);
}

async function users(run) {
  const { nhost, report, progress, options } = run;
  const counts = report.counts("auth.users");
  for await (const page of nhost.users()) {
    counts.read += page.length;
    const related = await nhost.related(page.map((user) => user.id));
    report.add("auth.user_roles", "read", related.roles.length);
    report.add("auth.user_providers", "read", related.providers.length);
    report.add("auth.user_security_keys", "read", related.securityKeys.length);
    report.add("auth.refresh_tokens", "read", related.refreshTokens.length + related.expiredTokens);
    report.add("auth.refresh_tokens", "leftOut", related.expiredTokens);
    report.leftOut("auth.refresh_tokens", "expired, not needed", related.expiredTokens);
    const groups = {
      roles: groupByUser(related.roles),
      providers: groupByUser(related.providers),
      securityKeys: groupByUser(related.securityKeys),
      refreshTokens: groupByUser(related.refreshTokens),
    };
    const mirrored = await nhost.mirrored(
      "user",
      page.map((user) => user.id),
    );
    const built = page.map((user) =>
      buildBundle(
        user,
        Object.fromEntries(Object.entries(groups).map(([part, group]) => [part, group.get(user.id) ?? []])),
        options.totpKey,
      ),
    );
    // Rows this service's Postgres mirror wrote (the app's database is the one read): this service's data, not Nhost's.
    for (const { bundle } of built) if (mirrored.has(bundle.id)) bundle.mirrored = true;
    const results = await run.send(
      "/users",
      "users",
      built.map(({ bundle }) => bundle),
      { dryRun: run.dryRun },
    );
    results.forEach((result, i) => {
      const { bundle, leftOut, notCarried } = built[i];
      countOutcome(report, "auth.users", result, bundleRows(bundle));
      for (const row of leftOut) {
        if (!row.column) report.add(row.table, "leftOut");
        report.leftOut(row.table, row.reason);
      }
      // The service names an unreadable TOTP secret itself (not carried, or no loss when it holds the secret an
      // earlier run imported); when it says nothing of it (a skipped user) the command's own note keeps it listed.
      const named = new Set(
        (result.warnings ?? [])
          .filter((w) => w.notCarried || /TOTP/.test(w.reason))
          .map((w) => `${w.table} ${w.id}`),
      );
      for (const row of notCarried)
        if (!named.has(`${row.table} ${row.id}`)) report.notCarried(row.table, row.id, row.reason);
    });
    progress.update("auth.users", counts);
  }
  progress.done("auth.users", counts);
}

async function dangling({ nhost, report }) {
  for await (const rows of nhost.dangling()) {
    for (const { table, id } of rows) {
      report.add(table, "read");
      report.add(table, "skipped");
      report.notCarried(table, id, "user not found");
    }
  }
}

async function files(run) {
  const { api, nhost, report, progress, dryRun, options, newBuckets } = run;
  const counts = report.counts("storage.files");
  const show = () => progress.update("storage.files", counts, { bytes: report.bytes });
  for await (const page of nhost.files()) {
    counts.read += page.length;
    const mirrored = await nhost.mirrored(
      "file",
      page.map((row) => row.id),
    );
    const records = page.map((row) =>
      mirrored.has(String(row.id)) ? { ...fileRecord(row), mirrored: true } : fileRecord(row),
    );
    const results = await run.send("/files/plan", "files", records);
    const needBytes = [];
    results.forEach((result, i) => {
      const record = records[i];
      if (result.outcome === "needs-bytes" || wouldNeedBytes(result, record, newBuckets))
        needBytes.push(record);
      else if (result.outcome === "skipped" && !record.isUploaded) {
        // Never uploaded in Nhost (an upload that did not finish): there are no bytes to carry.
        counts.leftOut++;
        report.leftOut("storage.files", "never uploaded in Nhost (is_uploaded false)");
      } else countOutcome(report, "storage.files", result);
    });
    await eachLimited(needBytes, UPLOADS_AT_ONCE, async (record) => {
      const outcome = await carryBytes(api, record, options.source, dryRun);
      if (outcome.notCarried) {
        counts.skipped++;
        report.notCarried("storage.files", record.id, outcome.notCarried);
      } else {
        // In a dry run "imported" means: the record and its bytes are ready to go.
        counts[outcome.outcome === "updated" ? "updated" : "imported"]++;
        report.bytes += record.size ?? 0;
      }
      show();
    });
    show();
  }
  progress.done("storage.files", counts, { bytes: report.bytes });
}

/**
 * In a dry run, the buckets a run would create are not there yet: the plan skips their files for that alone (its
 * only reason naming the bucket), where a run would ask for their bytes.
 */
export function wouldNeedBytes(result, record, newBuckets) {
  return (
    result.outcome === "skipped" &&
    newBuckets.has(record.bucketId) &&
    record.isUploaded &&
    result.reasons?.length === 1 &&
    result.reasons[0].code === "bucket-missing"
  );
}

/** One file the service asked bytes for: sent (or, in a dry run, only found at the source). */
export async function carryBytes(api, record, source, dryRun) {
  if (!source) return { notCarried: "bytes needed: give --files-dir or --files-from" };
  try {
    if (!dryRun) return await uploadFile(api, record, source);
    const found = await source.find(record.id, record);
    if (!found) return { notCarried: `bytes not found (${source.describe})` };
    if (found.size !== null && found.size !== record.size)
      return {
        notCarried: `bytes differ in size: ${found.size} at the source, ${record.size} in storage.files`,
      };
    return { outcome: "imported" };
  } catch (error) {
    if (!(error instanceof SourceError) || error.fatal) throw error;
    return { notCarried: error.message };
  }
}
