import { refreshLifetimeMs } from "../auth";
import type { Db } from "../db/client";
import { claim, releaseEntries } from "../db/directory";
import type { ImportedParts, ImportLedgerRow, ImportSystem } from "../db/schema";
import { eachShard } from "../db/shards";
import { UnavailableError } from "../errors";
import { withoutEvents } from "../events/record";
import type { Deps } from "../http/deps";
import { changedWords, changesHere, NO_PARTS, NOTHING_CHANGED, offered } from "./changed-here";
import { ledgerRows, userSystem } from "./ledger";
import { withServiceDefaults } from "./supabase-users";
import { type CheckedUser, type CheckOutcome, checkUser } from "./user-checks";
import { heldByAnother, type UserEntries, userEntries } from "./user-entries";
import { type Statement, writeUser } from "./user-writes";
import { byShard, type Here, readWhatIsHere } from "./what-is-here";
import type { ImportResult, RowReason } from "./wire";

/**
 * `POST /admin/import/nhost/users`: up to 100 Nhost users, each written whole (its row, roles, providers, security
 * keys, sessions and PATs by Nhost's hash, its pending ticket) in one D1 batch in its shard, or not at all. What
 * earlier runs wrote is in the import ledger, beside the user: the same user again writes nothing; a user changed here
 * since (its `updated_at` moved) is kept as it is here; a token the ledger knows is never written again, so one spent
 * or signed out here stays dead. With several shards the directory's keys of each user are claimed before its batch
 * (user-entries.ts): a key another user holds skips the user, as the unique indexes would in one database. `system`:
 * where the users come from (ledger.ts `userSystem`), written on their ledger rows; a user an earlier run imported
 * from another system is skipped (one id, one system: each system's delta runs list and remove only their own).
 */
export async function importUsers(
  deps: Deps,
  inputs: unknown[],
  dryRun: boolean,
  system?: ImportSystem,
): Promise<ImportResult[]> {
  const now = deps.now();
  const systems = new Map<string, ImportSystem>();
  const checked = await Promise.all(
    inputs.map(async (input): Promise<CheckOutcome> => {
      const outcome = await checkUser(withServiceDefaults(deps.config, input), now, refreshLifetimeMs(deps));
      if (!outcome.ok) return outcome;
      const { id } = outcome.user;
      const mine = userSystem(input, system);
      if (typeof mine !== "string")
        return { ok: false, id, reasons: [{ table: "auth.users", id, reason: mine.reason }] };
      systems.set(id, mine);
      return outcome;
    }),
  );
  const valid = checked.flatMap((c) => (c.ok ? [c.user] : []));
  const seen = await readWhatIsHere(deps, valid);
  const plans = new Map<string, Plan>();
  const claimed = { emails: new Map<string, string>(), phones: new Map<string, string>() };
  for (const user of valid)
    plans.set(user.id, await planUser(deps, user, seen, claimed, now, systems.get(user.id)!));

  const results = checked.map((c): ImportResult => {
    if (!c.ok) return { id: c.id, outcome: "skipped", reasons: c.reasons };
    return plans.get(c.user.id)!.result;
  });
  if (dryRun) return results;
  const writes = [...plans.values()].filter((plan) => plan.statements.length > 0);
  if (writes.length === 0) return results;
  await claimKeys(deps, writes, now);
  const groups = byShard(
    deps.shards,
    writes.filter((plan) => plan.state === "claimed"),
    (plan) => plan.user.id,
  );
  // The import writes no per-user events (contract move-in §2): each user's rows go in muted. Every shard's batch
  // runs even when another's fails, so that the keys of each user go back or stay as its own write went.
  const failures = await eachShard(deps.shards, async (db, index) => {
    const group = groups.get(index);
    return group
      ? writeShard(db, group).then(
          () => null,
          (error: unknown) => afterFault(db, group, error),
        )
      : null;
  });
  // Only a user whose batch surely did not run gives its new keys back; one whose batch may have run keeps them all.
  await Promise.all(
    writes.map((plan) =>
      plan.state === "written"
        ? releaseEntries(deps.shards, plan.user.id, plan.entries.dropped).catch(() => {})
        : plan.state === "claimed"
          ? releaseEntries(deps.shards, plan.user.id, plan.entries.fresh).catch(() => {})
          : undefined,
    ),
  );
  const failure = failures.find((error) => error !== null);
  if (failure) throw failure;
  return results;
}

interface Plan {
  user: CheckedUser;
  result: ImportResult;
  statements: Statement[];
  entries: UserEntries;
  /**
   * `claimed`: its keys are the user's, its batch not (yet) written; `written`; `skipped`: nothing of it written;
   * `unsure`: its batch failed and may have run (its answer lost, and the ledger's read back failed too).
   */
  state: "planned" | "claimed" | "written" | "skipped" | "unsure";
}

const skipPlan = (plan: Plan, reasons: RowReason[]) => {
  plan.state = "skipped";
  plan.result.outcome = "skipped";
  plan.result.reasons = reasons;
  delete plan.result.warnings;
};

/**
 * The users' directory keys, claimed before their batches (a no-op with one shard), a few users at a time. A user
 * whose key another user holds is skipped; a directory that fails is a 503 the command retries (what this call had
 * claimed goes back).
 */
async function claimKeys(deps: Deps, plans: Plan[], now: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      const taken = await claim(deps.shards, plan.user.id, plan.entries.claims, now);
      if (taken) skipPlan(plan, [heldByAnother(plan.user, taken)]);
      else plan.state = "claimed";
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(6, plans.length) }, lane));
  } catch (error) {
    await Promise.all(
      plans
        .filter((plan) => plan.state === "claimed")
        .map((plan) => releaseEntries(deps.shards, plan.user.id, plan.entries.fresh).catch(() => {})),
    );
    throw new UnavailableError(`import directory: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** One shard's users in one batch; if a constraint breaks it, one by one, so only that user is skipped. */
async function writeShard(db: Db, plans: Plan[]): Promise<void> {
  const muted = (plan: Plan) =>
    withoutEvents(db, [plan.user.id], plan.statements) as [Statement, ...Statement[]];
  try {
    await db.batch(plans.flatMap(muted) as [Statement, ...Statement[]]);
    for (const plan of plans) plan.state = "written";
    return;
  } catch (error) {
    unlessConstraint(error);
  }
  // One user's rows broke a constraint the checks did not foresee (a row written here meanwhile): the database's
  // reason skips that user alone.
  for (const plan of plans) {
    try {
      await db.batch(muted(plan));
      plan.state = "written";
    } catch (error) {
      const constraint = unlessConstraint(error);
      skipPlan(plan, [
        { table: "auth.users", id: plan.user.id, reason: `could not be written (${constraint})` },
      ]);
    }
  }
}

/**
 * After a shard's write failed on a fault: which of its users' batches ran all the same. A fault may come after D1
 * applied a batch (its answer lost); given back then, the user's keys would leave its rows unfound by its address or
 * identity, and the address free for another sign-up to make a second account in another shard, while the retry,
 * finding the user in the ledger, writes and claims nothing. So each user still `claimed` is looked for in the
 * ledger, which its own batch writes beside its rows: there with this run's fingerprint, it is `written` (its keys
 * stay); absent, its batch surely did not run (its new keys go back); the read failing too, `unsure` (its keys stay:
 * the retry finds the user, or claims the same keys again; a key whose rows never arrived is taken over after the
 * claim window, src/db/directory.ts). The fault stands unless every user's batch is found to have run.
 */
async function afterFault(db: Db, plans: Plan[], error: unknown): Promise<unknown> {
  const pending = plans.filter((plan) => plan.state === "claimed");
  const here = await ledgerRows(
    db,
    "user",
    pending.map((plan) => plan.user.id),
  ).catch(() => undefined);
  for (const plan of pending) {
    if (!here) plan.state = "unsure";
    else if (here.get(plan.user.id)?.fingerprint === plan.user.fingerprint) plan.state = "written";
  }
  return plans.some((plan) => plan.state === "claimed" || plan.state === "unsure") ? error : null;
}

/**
 * The constraint a failed batch broke. Anything else (D1 unreachable, overloaded, an answer lost) is the platform's
 * fault, not the row's: a 503 the command retries (unless the batch ran all the same: `afterFault`), never a user
 * reported bad.
 */
function unlessConstraint(error: unknown): string {
  const message = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  const constraint = /(UNIQUE|FOREIGN KEY|CHECK|NOT NULL) constraint failed[\w.,:\s]*/.exec(message)?.[0];
  if (!constraint) throw new UnavailableError(`import batch: ${message.slice(0, 200)}`);
  return constraint.trim();
}

const NOTHING: ImportedParts = NO_PARTS;

async function planUser(
  deps: Deps,
  user: CheckedUser,
  here: Here,
  claimed: { emails: Map<string, string>; phones: Map<string, string> },
  now: number,
  system: ImportSystem,
): Promise<Plan> {
  const none: Pick<Plan, "user" | "statements" | "entries" | "state"> = {
    user,
    statements: [],
    entries: { claims: [], fresh: [], dropped: [] },
    state: "planned",
  };
  const skip = (reasons: RowReason[]): Plan => ({
    ...none,
    result: { id: user.id, outcome: "skipped" as const, reasons },
  });
  const keep = (reason: string): Plan => ({
    ...none,
    result: {
      id: user.id,
      outcome: "kept" as const,
      reasons: [{ table: "auth.users", id: user.id, reason }],
    },
  });
  const before = here.ledger.get(user.id);
  const existing = here.usersById.get(user.id);
  const checked = checkWarnings(user, before, existing);
  // The same id from a second system (a UUID kept as it was, say): its first system's delta runs own it, and its
  // removal there must not be undone here, nor its row overwritten by another system's.
  if (before && before.system !== system)
    return skip([
      {
        table: "auth.users",
        id: user.id,
        reason: `already imported from ${before.system}: not imported from ${system}`,
      },
    ]);
  if (before && !existing) return keep("deleted in this service since the last import: not brought back");
  // A row this service's Postgres mirror wrote into the database the command reads (docs/hasura.md): a user created
  // here is this service's, not Nhost's; never imported, not an error.
  if (user.mirrored && !before)
    return keep("a user of this service, written to this database by its Postgres mirror: not imported");
  if (before && before.fingerprint === user.fingerprint)
    return {
      ...none,
      result: { id: user.id, outcome: "unchanged", ...(checked.length ? { warnings: checked } : {}) },
    };
  // Changed here since the last run (an admin, the user, a sign-in that rehashed the password): the user's row stays
  // as it is here, but what Nhost ended (a session signed out there, a key removed) still ends here. So does a row
  // the mirror wrote (it holds this service's own data) and the row of a user whose credentials changed here.
  const changes =
    before !== undefined && existing !== undefined
      ? changesHere(user, before, existing, here, now)
      : NOTHING_CHANGED;
  const keepRow =
    (before !== undefined && existing !== undefined && existing.updatedAt !== before.rowUpdatedAt) ||
    user.mirrored ||
    changes.changed.length > 0;
  if (!before && existing)
    return skip([
      { table: "auth.users", id: user.id, reason: "a user with this id exists here and was not imported" },
    ]);

  // What this run carries of the user: its tombstoned parts, and after a credential change here what is new, left out.
  const carrying = offered(user, before?.parts ?? NOTHING, changes);
  const conflicts = findConflicts(carrying.user, here, claimed);
  if (conflicts.length > 0) return skip(conflicts);
  if (user.row.email) claimed.emails.set(user.row.email, user.id);
  if (user.row.phoneNumber) claimed.phones.set(user.row.phoneNumber, user.id);

  const { statements, tokens, carried, left } = await writeUser(
    deps,
    carrying.user,
    before,
    here,
    now,
    keepRow,
    changes,
    system,
  );
  const entries = userEntries(carrying.user, before?.parts ?? NOTHING, here, tokens, !keepRow);
  const written = { user: carrying.user, statements, entries, state: "planned" as const };
  const warnings = [
    ...checked,
    ...carrying.left,
    ...left,
    ...user.tokens
      .filter((t) => here.tokenOwners.has(t.hash) && !before?.parts?.tokens[t.hash])
      .map((t) => ({
        table: "auth.refresh_tokens",
        id: t.id,
        reason: "imported before and spent, revoked or moved here since: not brought back",
        notCarried: false,
      })),
  ];
  // The rows this run newly carried: the report counts them as carried, whatever the user's own outcome.
  const extra = { ...(warnings.length ? { warnings } : {}), ...(carried.length ? { carried } : {}) };
  if (changes.changed.length > 0) {
    const reason =
      `credentials changed in this service (${changedWords(changes.changed)}): the service's row is kept, and ` +
      "nothing new comes from Nhost but the rotation of sessions still alive here";
    return { ...written, result: { ...keep(reason).result, ...extra } };
  }
  if (user.mirrored) return { ...written, result: { id: user.id, outcome: "unchanged", ...extra } };
  if (keepRow) {
    const reason = "changed in this service since the last import: the service's row is kept";
    return { ...written, result: { ...keep(reason).result, ...extra } };
  }
  return {
    ...written,
    result: {
      id: user.id,
      outcome: before ? "updated" : "imported",
      ...(warnings.length ? { warnings } : {}),
    },
  };
}

/**
 * The checks' warnings, as they stand against what is here: a TOTP secret this run could not read is no loss when the
 * service holds one already (imported by an earlier run with Nhost's key, and kept by this one).
 */
function checkWarnings(
  user: CheckedUser,
  before: ImportLedgerRow | undefined,
  existing: Here["usersById"] extends Map<string, infer V> ? V | undefined : never,
): CheckedUser["warnings"] {
  const held = (before?.parts?.totpHash ?? null) !== null && existing?.totpMissing === false;
  if (!held || user.totpSecret !== null || !user.totpUnreadable) return user.warnings;
  return user.warnings.map((w) =>
    w.table === "auth.users" && w.notCarried && /^TOTP/.test(w.reason)
      ? {
          ...w,
          reason: "TOTP secret unreadable this run: the one an earlier run imported is kept",
          notCarried: false,
        }
      : w,
  );
}

/** Another user here (or earlier in the batch) holding this user's email, phone, security key or identity. */
function findConflicts(
  user: CheckedUser,
  here: Here,
  claimed: { emails: Map<string, string>; phones: Map<string, string> },
): RowReason[] {
  const reasons: RowReason[] = [];
  const other = (owner: string | undefined) => owner !== undefined && owner !== user.id;
  const { email, phoneNumber } = user.row;
  if (email && (other(here.userByEmail.get(email)) || other(claimed.emails.get(email))))
    reasons.push({
      table: "auth.users",
      id: user.id,
      reason: `email ${email} belongs to another user (${here.userByEmail.get(email) ?? claimed.emails.get(email)}); addresses differing only in case are one address here`,
    });
  if (phoneNumber && (other(here.userByPhone.get(phoneNumber)) || other(claimed.phones.get(phoneNumber))))
    reasons.push({
      table: "auth.users",
      id: user.id,
      reason: `phone number ${phoneNumber} belongs to another user`,
    });
  for (const key of user.securityKeys)
    if (other(here.keyOwners.get(key.credentialId)))
      reasons.push({
        table: "auth.user_security_keys",
        id: key.id,
        reason: "credential id belongs to another user's key",
      });
  for (const identity of user.providers)
    if (other(here.identityOwners.get(`${identity.provider}\n${identity.providerUserId}`)))
      reasons.push({
        table: "auth.user_providers",
        id: identity.id,
        reason: "identity is linked to another user",
      });
  return reasons;
}
