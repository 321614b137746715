// `npm run admin -- import-supabase`: moves a Supabase project's users in (contract supabase.md §5–6). It reads
// Supabase's `auth` schema directly (read-supabase.mjs) and writes through the same admin import API, ledger,
// report, exit codes, guards and tombstones as `import-nhost` (scripts/import-nhost/): a run cut short and started
// again, or a delta run just before the cut-over, ends as one clean run would.
//
// A run: 1. removals (users imported before that Supabase no longer has, or soft-deleted since; then SSO providers
// deleted there), behind the same guards against a wrong database; 2. the readers, in order: each carries one group of Supabase's tables (users with
// their identities, MFA factors, pending links, sessions and refresh tokens; SSO providers; storage); 3. the old API
// keys from the environment (api-keys.mjs); 4. `POST …/completed`, the report.

import { completedReport, countOutcome } from "../import/outcomes.mjs";
import { importApi } from "../import-nhost/api.mjs";
import { batchSender } from "../import-nhost/batches.mjs";
import { hasPassword } from "../import-nhost/command.mjs";
import { connectNhost, redactUrl } from "../import-nhost/read-nhost.mjs";
import { countGone, emptiedInNhost, MASS_REMOVAL, removeGone } from "../import-nhost/removals.mjs";
import { Progress, Report } from "../import-nhost/report.mjs";
import { groupByUser } from "../import-nhost/user-bundles.mjs";
import { recordApiKeys } from "./api-keys.mjs";
import { parseSupabaseKeys } from "./factor-secrets.mjs";
import { GOTRUE_OTP_EXPIRY } from "./pending-links.mjs";
import { SupabaseDb } from "./read-supabase.mjs";
import { removeGoneProviders, sso, ssoDomainsOf } from "./sso.mjs";
import { storage, storageSource } from "./storage.mjs";
import { buildSupabaseBundle, notSent, supabaseBundleRows } from "./user-bundles.mjs";

export const importSupabase = {
  summary:
    "move a Supabase project in: users (passwords, metadata, identities, MFA factors, pending links, sessions), SSO providers, buckets and objects, the old API keys",
  usage:
    "import-supabase [--database-url postgres://USER@HOST:PORT/DB] [--mailer-otp-exp SECONDS] [--dry-run]\n" +
    "    [--files-dir DIR | --files-from https://<old project>/storage/v1] [--allow-mass-removal]\n\n" +
    "  Secrets come from the environment, never from flags (npm prints the command line it runs):\n" +
    "  SUPABASE_DATABASE_URL       the Supabase project's Postgres, postgres://USER:PASS@HOST:PORT/DB; read only\n" +
    "  SUPABASE_ENCRYPTION_KEY     GoTrue's DB encryption key (GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY), or\n" +
    "                              id:key pairs, when its TOTP secrets are encrypted; without it such users are\n" +
    "                              listed and must have their MFA reset by an admin\n" +
    "  SUPABASE_SERVICE_KEY        the old project's service_role key: for --files-from, and recorded so that it\n" +
    "                              keeps working on the Supabase face until the cut-over's ceiling\n" +
    "  SUPABASE_ANON_KEY           the old project's anon key, recorded likewise (the face must be enabled)\n" +
    "  ADMIN_SECRET, AUTH_URL      this service's admin secret and auth URL (as every admin command)\n\n" +
    "  --database-url URL          instead of SUPABASE_DATABASE_URL, for a database without a password in its URL\n" +
    `  --mailer-otp-exp SECONDS    the project's GOTRUE_MAILER_OTP_EXP (default ${GOTRUE_OTP_EXPIRY}): how long a link\n` +
    "                              mailed before the move keeps working\n" +
    "  --files-dir DIR             Storage's file backend (FILE_STORAGE_BACKEND_PATH), or a copy of its S3 bucket:\n" +
    "                              the folder holding <tenant>/<bucket>/<name>/<version>\n" +
    "  --files-from URL            or the old Storage API: GET URL/object/authenticated/<bucket>/<name>\n" +
    "  --dry-run                   check everything and report, write nothing\n" +
    "  --allow-mass-removal        remove here more than half of what earlier runs imported, when Supabase no\n" +
    "                              longer has it (without it, such a run removes nothing: a wrong database?)\n\n" +
    "  Run it again at any time: it carries what changed in Supabase since and leaves alone what changed here.\n" +
    "  Progress on stderr, the report on stdout (--json: one JSON object).\n" +
    "  Exit 0: every row carried or knowingly left out; 1: some row not carried (listed), or a failure; 2: usage",
  options: {
    "database-url": { type: "string" },
    "mailer-otp-exp": { type: "string" },
    // Refused (SECRET_FLAGS): declared so that the message names the variable to set instead.
    "supabase-encryption-key": { type: "string" },
    "supabase-service-key": { type: "string" },
    "supabase-anon-key": { type: "string" },
    "files-dir": { type: "string" },
    "files-from": { type: "string" },
    "dry-run": { type: "boolean", default: false },
    "allow-mass-removal": { type: "boolean", default: false },
  },
  run,
};

/** What each run carries, in order: one reader per group of Supabase's tables (later parts add theirs). */
const READERS = [users, sso, storage];

async function run(cli, values) {
  const options = checkOptions(cli, values);
  const files = await storageSource(cli, values);
  cli.secret(); // fails now, before Supabase is read, when there is no admin secret for this server
  const dryRun = values["dry-run"];
  const supabase = await connectNhost(options.databaseUrl, (message) => cli.fail(message), {
    system: "Supabase",
    Db: SupabaseDb,
  });
  const report = new Report({ dryRun, server: cli.server, source: "Supabase" });
  const progress = new Progress();
  const api = importApi(cli, { system: "supabase" });
  const context = {
    api,
    send: batchSender(api),
    supabase,
    report,
    progress,
    dryRun,
    options,
    files,
    allowMassRemoval: values["allow-mass-removal"],
  };
  progress.note(
    `import-supabase: ${redactUrl(options.databaseUrl)} → ${cli.server}${dryRun ? " (dry run: nothing will be written)" : ""}`,
  );
  try {
    await removals(context);
    for (const reader of READERS) await reader(context);
    await recordApiKeys({ ...context, cli });
    if (!dryRun) await api.post("/completed", { report: completedReport(report) });
  } catch (error) {
    await supabase.close();
    cli.fail(
      `import-supabase stopped: ${error.message}\nWhat was imported stays; run the command again to carry on.`,
    );
  } finally {
    await supabase.close();
  }
  if (values.json) console.log(JSON.stringify(report.toJSON(), null, 2));
  else console.log(report.lines().join("\n"));
  process.exitCode = report.exitCode();
}

function checkOptions(cli, values) {
  if (values["supabase-encryption-key"] !== undefined)
    cli.usageError(
      "takes no --supabase-encryption-key: npm prints the command line, secret included. Set SUPABASE_ENCRYPTION_KEY in the environment",
    );
  if (values["supabase-anon-key"] !== undefined)
    cli.usageError(
      "takes no --supabase-anon-key: npm prints the command line, key included. Set SUPABASE_ANON_KEY in the environment",
    );
  const flagUrl = values["database-url"];
  if (flagUrl !== undefined && hasPassword(flagUrl))
    cli.usageError(
      "--database-url holds a password, which npm prints with the command line: set SUPABASE_DATABASE_URL instead",
    );
  const databaseUrl = flagUrl ?? process.env.SUPABASE_DATABASE_URL;
  if (!databaseUrl)
    cli.usageError("needs SUPABASE_DATABASE_URL=postgres://USER:PASS@HOST:PORT/DB in the environment");
  if (!/^postgres(ql)?:\/\//.test(databaseUrl))
    cli.usageError(`${flagUrl ? "--database-url" : "SUPABASE_DATABASE_URL"} must be a postgres:// URL`);
  const expiry = values["mailer-otp-exp"];
  if (expiry !== undefined && !/^\d{1,7}$/.test(expiry))
    cli.usageError("--mailer-otp-exp must be a number of seconds");
  let keys = null;
  if (process.env.SUPABASE_ENCRYPTION_KEY) {
    try {
      keys = parseSupabaseKeys(process.env.SUPABASE_ENCRYPTION_KEY);
    } catch (error) {
      cli.usageError(error.message);
    }
  }
  return { databaseUrl, keys, otpExpiry: expiry === undefined ? GOTRUE_OTP_EXPIRY : Number(expiry) };
}

/** Users imported before and gone from Supabase (or soft-deleted there), with import-nhost's guards. */
async function removals({ api, supabase, report, progress, dryRun, allowMassRemoval }) {
  const ids = () => supabase.ids("auth.users");
  if (await emptiedInNhost(api, ids(), "user"))
    throw new Error(
      "auth.users: no users in Supabase, but earlier runs imported some: nothing was removed or written. " +
        "Is --database-url the project imported before?",
    );
  if (!allowMassRemoval) {
    const { gone, total } = await countGone(api, ids(), "user");
    if (gone > MASS_REMOVAL && gone * 2 > total)
      throw new Error(
        `${gone} of ${total} imported users are not in this database: nothing was removed or written. Is ` +
          "--database-url the project imported before? If they really were deleted, run again with --allow-mass-removal.",
      );
  }
  await removeGone({ api, nhostIds: ids(), kind: "user", table: "auth.users", dryRun, report, progress });
  const { deleted, kept } = report.counts("auth.users");
  if (deleted || kept) progress.done("auth.users (removals)", report.counts("auth.users"));
  await removeGoneProviders({ api, supabase, report, progress, dryRun, allowMassRemoval });
}

/** The users reader: auth.users with auth.identities, auth.mfa_factors and auth.one_time_tokens. */
async function users(run) {
  const { supabase, report, progress, options } = run;
  const counts = report.counts("auth.users");
  const ssoDomains = await ssoDomainsOf(supabase);
  for await (const page of supabase.users()) {
    counts.read += page.length;
    const related = await supabase.related(page.map((user) => user.id));
    report.add("auth.identities", "read", related.identities.length);
    report.add("auth.mfa_factors", "read", related.factors.length);
    report.add("auth.webauthn_credentials", "read", related.passkeys.length);
    report.add("auth.sessions", "read", related.sessions.length);
    report.add("auth.refresh_tokens", "read", related.sessionTokens.length);
    const identities = groupByUser(related.identities);
    const factors = groupByUser(related.factors);
    const passkeys = groupByUser(related.passkeys);
    const tokens = related.oneTimeTokens && groupByUser(related.oneTimeTokens);
    const sessions = groupByUser(related.sessions);
    const sessionOf = new Map(related.sessions.map((s) => [s.id, s.user_id]));
    const sessionTokens = groupByUser(
      related.sessionTokens.map((t) => ({ ...t, user_id: sessionOf.get(t.session_id) })),
    );
    const built = [];
    for (const user of page) {
      const reason = notSent(user);
      // A user not sent takes its identities and factors with it, counted in the same column.
      const theirs = (identities.get(user.id) ?? []).length;
      const factorsOf = (factors.get(user.id) ?? []).length;
      const keysOf = (passkeys.get(user.id) ?? []).length;
      const sessionsOf = (sessions.get(user.id) ?? []).length;
      const sessionTokensOf = (sessionTokens.get(user.id) ?? []).length;
      if (reason?.leftOut) {
        report.add("auth.users", "leftOut");
        report.add("auth.identities", "leftOut", theirs);
        report.add("auth.mfa_factors", "leftOut", factorsOf);
        report.add("auth.webauthn_credentials", "leftOut", keysOf);
        report.add("auth.sessions", "leftOut", sessionsOf);
        report.add("auth.refresh_tokens", "leftOut", sessionTokensOf);
        report.leftOut("auth.users", reason.leftOut);
        continue;
      }
      if (reason?.notCarried) {
        report.add("auth.users", "skipped");
        report.add("auth.identities", "skipped", theirs);
        report.add("auth.mfa_factors", "skipped", factorsOf);
        report.add("auth.webauthn_credentials", "skipped", keysOf);
        report.add("auth.sessions", "skipped", sessionsOf);
        report.add("auth.refresh_tokens", "skipped", sessionTokensOf);
        report.notCarried("auth.users", user.id, reason.notCarried);
        continue;
      }
      const rows = {
        identities: identities.get(user.id) ?? [],
        factors: factors.get(user.id) ?? [],
        oneTimeTokens: tokens ? (tokens.get(user.id) ?? []) : null,
        passkeys: passkeys.get(user.id) ?? [],
        sessions: sessions.get(user.id) ?? [],
        sessionTokens: sessionTokens.get(user.id) ?? [],
      };
      built.push(
        buildSupabaseBundle(user, rows, {
          keys: options.keys,
          now: Date.now(),
          otpExpiry: options.otpExpiry,
          ssoDomains,
        }),
      );
    }
    if (built.length === 0) continue;
    const results = await run.send(
      "/users",
      "users",
      built.map(({ bundle }) => bundle),
      { dryRun: run.dryRun },
    );
    results.forEach((result, i) => {
      const { bundle, leftOut, notCarried, own } = built[i];
      countOutcome(report, "auth.users", result, supabaseBundleRows(bundle, own));
      // Rows of the user's tables that did not go with it (a factor or identity): counted where they stayed.
      for (const row of leftOut) {
        if (row.table !== "auth.one_time_tokens") report.add(row.table, "leftOut");
        report.leftOut(row.table, row.reason);
      }
      // An unreadable TOTP secret the service names itself is not listed twice.
      const named = (result.warnings ?? []).some((w) => w.notCarried && /TOTP/.test(w.reason));
      for (const row of notCarried) {
        report.add(row.table, "skipped");
        if (!(named && /TOTP secret unreadable/.test(row.reason)))
          report.notCarried(row.table, row.id, row.reason);
      }
    });
    progress.update("auth.users", counts);
  }
  progress.done("auth.users", counts);
}
