// `npm run admin -- import-users --from auth0|firebase|clerk|cognito|csv --file F`: moves users in from another
// vendor's export file (contract supabase.md §5–6). Each vendor's reader (auth0.mjs, firebase.mjs, clerk.mjs,
// cognito.mjs, contract-csv.mjs) turns its file into records (records.mjs); each record becomes the wire's UserBundle
// and goes through the same admin import API, ledger, checks and report as import-nhost (scripts/import-nhost/api.mjs,
// batches.mjs, report.mjs, scripts/import/outcomes.mjs). The server remembers what earlier runs wrote, so a second
// run changes nothing and an interrupted one carries on; ids are derived the same way on every run (records.mjs).
//
// A run first removes the users an earlier run imported from the same system that the file no longer names
// (removals.mjs), unless --partial says the file is only part of them. The ledger records each user's system, so
// another system's users are never "gone" from this file (docs/decisions.md, "Issue 44: one ledger, many systems").
import { stat } from "node:fs/promises";
import { completedReport, countOutcome } from "../import/outcomes.mjs";
import { importApi } from "../import-nhost/api.mjs";
import { batchSender } from "../import-nhost/batches.mjs";
import { Progress, Report } from "../import-nhost/report.mjs";
import { readAuth0 } from "./auth0.mjs";
import { readClerk } from "./clerk.mjs";
import { readCognito } from "./cognito.mjs";
import { readCsv } from "./contract-csv.mjs";
import { RefusedFile } from "./files.mjs";
import { readFirebase } from "./firebase.mjs";
import { bundleOf, duplicateChecker, HASHERS } from "./records.mjs";
import { removeGoneUsers, usersNamed } from "./removals.mjs";

export const SOURCES = {
  auth0: readAuth0,
  firebase: readFirebase,
  clerk: readClerk,
  cognito: readCognito,
  csv: readCsv,
};
/** Users per request: the wire's limit. */
const BATCH = 100;

export const importUsers = {
  summary: "move users in from Auth0, Firebase, Clerk, Cognito or a CSV export (idempotent; resumable)",
  usage:
    "import-users --from auth0|firebase|clerk|cognito|csv --file FILE [--passwords FILE] [--hash-config FILE]\n" +
    "    [--dry-run] [--partial] [--allow-mass-removal]\n\n" +
    "  --from auth0      --file: Auth0's user export job (NDJSON); --passwords: Auth0's password-hash export\n" +
    "  --from firebase   --file: `firebase auth:export users.json`; --hash-config: the project's password hash\n" +
    "                    parameters (the console's hash_config block, saved to a file)\n" +
    "  --from clerk      --file: the Clerk Dashboard's user export (CSV)\n" +
    "  --from cognito    --file: `aws cognito-idp list-users` (JSON; no passwords: see the lazy-migration hook)\n" +
    "  --from csv        --file: id,email,email_verified,phone,display_name,password_hash,password_hasher,metadata\n" +
    "                    (password_hasher: bcrypt, argon2id, argon2i, scrypt, scrypt_firebase, pbkdf2_sha1,\n" +
    "                    pbkdf2_sha256, pbkdf2_sha512, bcrypt_sha256, sha256_salted, md5, phpass)\n" +
    "  --dry-run         check everything with the service and report, write nothing\n" +
    "  --partial         the file holds only some of the system's users: no removal pass\n" +
    "  --allow-mass-removal  remove here more than half of the users earlier runs imported from this system,\n" +
    "                    when the file no longer names them (without it, such a run removes and writes nothing)\n\n" +
    "  Run it again at any time with the latest whole export: users unchanged in the file change nothing,\n" +
    "  changed ones are updated, users changed here since are kept as they are here, and users imported from\n" +
    "  the same system that the file no longer names are removed here. Ids that are not UUIDs become UUIDs\n" +
    "  derived from <system>:<id> (the same on every run); the original is in metadata.importedFrom.\n" +
    "  Progress on stderr, the report on stdout (--json: one JSON object).\n" +
    "  Exit 0: every user carried or knowingly left out; 1: some user not carried (listed), or a failure; 2: a\n" +
    "  usage error or a file that is not what --from says (nothing written)",
  options: {
    from: { type: "string" },
    file: { type: "string" },
    passwords: { type: "string" },
    "hash-config": { type: "string" },
    "dry-run": { type: "boolean", default: false },
    partial: { type: "boolean", default: false },
    "allow-mass-removal": { type: "boolean", default: false },
  },
  run,
};

async function checkOptions(cli, values) {
  const from = values.from;
  if (!from || !Object.hasOwn(SOURCES, from))
    cli.usageError(`needs --from ${Object.keys(SOURCES).join("|")}`);
  const isFile = async (path) => (await stat(path).catch(() => null))?.isFile() === true;
  if (!values.file) cli.usageError("needs --file: the export file");
  for (const flag of ["file", "passwords", "hash-config"])
    if (values[flag] !== undefined && !(await isFile(values[flag])))
      cli.usageError(`--${flag} ${values[flag]} is not a file`);
  if (values.passwords !== undefined && from !== "auth0")
    cli.usageError("--passwords is Auth0's password-hash export: only with --from auth0");
  if (values["hash-config"] !== undefined && from !== "firebase")
    cli.usageError("--hash-config is Firebase's hash parameters: only with --from firebase");
  return { from, file: values.file, passwords: values.passwords, hashConfig: values["hash-config"] };
}

async function run(cli, values) {
  const options = await checkOptions(cli, values);
  cli.secret(); // fails now, before the file is read, when there is no admin secret for this server
  const dryRun = values["dry-run"];
  const report = new Report({ dryRun, server: cli.server, source: "the export file" });
  const progress = new Progress();
  // Every user, ledger page and removal of this run is recorded under --from (the ledger's system).
  const api = importApi(cli, { system: options.from });
  const state = { send: batchSender(api), report, progress, dryRun, sent: 0 };
  progress.note(
    `import-users: ${options.from} ${options.file} → ${cli.server}${dryRun ? " (dry run: nothing will be written)" : ""}`,
  );
  try {
    if (!values.partial) {
      const named = await usersNamed(options.from, SOURCES[options.from](options));
      const allowMassRemoval = values["allow-mass-removal"];
      await removeGoneUsers({ api, named, dryRun, allowMassRemoval, report, progress });
    }
    await importFile(state, SOURCES[options.from](options));
    if (!dryRun) await api.post("/completed", { report: completedReport(report) });
  } catch (error) {
    // A file that is not what --from says is found before anything is sent: the run is refused whole.
    if (error instanceof RefusedFile && state.sent === 0) cli.usageError(error.message);
    cli.fail(
      `import-users stopped: ${error.message}\nWhat was imported stays; run the command again to carry on.`,
    );
  }
  if (values.json) console.log(JSON.stringify(report.toJSON(), null, 2));
  else console.log(report.lines().join("\n"));
  process.exitCode = report.exitCode();
}

/** Reads the source's records, checks what the command can, and sends the rest 100 at a time. */
export async function importFile(state, items) {
  const { report, progress } = state;
  const counts = report.counts("auth.users");
  const duplicate = duplicateChecker();
  let batch = [];
  for await (const item of items) {
    if (item.problem) {
      if (!item.problem.passwordsFile) {
        counts.read++;
        counts.skipped++;
      }
      report.notCarried("auth.users", item.problem.id, item.problem.reason);
      continue;
    }
    const { record } = item;
    counts.read++;
    const label = record.sourceId;
    const twin = duplicate(record, label);
    if (twin) {
      counts.skipped++;
      report.notCarried("auth.users", label, twin);
      continue;
    }
    // The service refuses an unknown hasher too; naming it here keeps the report's reason in the vendor's terms.
    if (record.passwordHash && !HASHERS.has(record.passwordHasher)) {
      counts.skipped++;
      report.notCarried("auth.users", label, `password hasher "${record.passwordHasher}" is unknown`);
      continue;
    }
    const bundle = bundleOf(record);
    for (const identity of record.identities)
      if (identity.provider.startsWith("unknown:"))
        report.leftOut(
          "auth.user_providers",
          `provider "${identity.provider.slice(8)}" has no counterpart here: not linked`,
        );
    for (const reason of record.leftOut) report.leftOut("auth.users", reason);
    report.add("auth.user_providers", "read", bundle.providers.length);
    batch.push({ bundle, label });
    if (batch.length === BATCH) {
      await sendBatch(state, batch);
      batch = [];
      progress.update("auth.users", counts);
    }
  }
  if (batch.length > 0) await sendBatch(state, batch);
  progress.done("auth.users", counts);
}

async function sendBatch(state, batch) {
  state.sent += batch.length;
  const results = await state.send(
    "/users",
    "users",
    batch.map(({ bundle }) => bundle),
    { dryRun: state.dryRun },
  );
  results.forEach((result, i) => {
    const { bundle, label } = batch[i];
    // The report names users as the vendor does, with the id they have here when it differs.
    const name = label === bundle.id ? label : `${label} (${bundle.id})`;
    const named = (row) => (row.id === bundle.id ? { ...row, id: name } : row);
    const relabeled = {
      ...result,
      id: name,
      ...(result.reasons ? { reasons: result.reasons.map(named) } : {}),
      ...(result.warnings ? { warnings: result.warnings.map(named) } : {}),
    };
    countOutcome(state.report, "auth.users", relabeled, { "auth.user_providers": bundle.providers.length });
  });
}
