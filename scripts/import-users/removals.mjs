// import-users' removal pass: the users an earlier run imported from the same system (`--from`) that the export file no
// longer names, deleted at the vendor since. The same pass as import-nhost's (scripts/import-nhost/removals.mjs: the
// merge with the service's ledger, its guards, the same `POST …/removals`), with the file's ids in place of Nhost's
// table. The service lists and removes only the run's system's users (the import API carries `system`,
// scripts/import-nhost/api.mjs), so users from Nhost or from another vendor are never taken for deleted ones.
import { countGone, emptiedInNhost, MASS_REMOVAL, removeGone } from "../import-nhost/removals.mjs";
import { importedId } from "./records.mjs";

const TABLE = "auth.users";

/**
 * The ids (as imported here) of every user the file names, sorted in byte order for the merge, and the labels of rows
 * that name no user at all (a line that is not JSON, a row without an id). A row the command does not send (a hasher
 * unknown, a twin) still names a user the vendor has: it is not removed. Ids are UUIDs in lower case: JavaScript's
 * default order is their byte order. One id per user in memory (about 100 bytes each).
 */
export async function usersNamed(system, items) {
  const ids = new Set();
  const unnamed = [];
  for await (const item of items) {
    const sourceId = item.record ? item.record.sourceId : item.problem.sourceId;
    // The Auth0 password file's lines are hashes, not users.
    if (item.problem?.passwordsFile) continue;
    if (sourceId === undefined) unnamed.push(item.problem.id);
    else ids.add(importedId(system, sourceId));
  }
  return { ids: [...ids].sort(), unnamed };
}

/**
 * The removal pass, before the users are sent (a user deleted at the vendor and signed up again with the same email is
 * gone here before the new one comes in). The guards stop the whole run, nothing removed or written: a file naming
 * no user while earlier runs imported some, or one lacking more than half of them (`--allow-mass-removal` to go on)
 * is far likelier the wrong file than a vendor that deleted its users. A file with rows that name no user can't say
 * who is gone: nothing is removed, and the report says why.
 */
export async function removeGoneUsers({ api, named, dryRun, allowMassRemoval, report, progress }) {
  const fileIds = async function* () {
    yield* named.ids;
  };
  if (await emptiedInNhost(api, fileIds(), "user"))
    throw new Error(
      `the file names no user, but earlier runs imported users from ${api.system}: nothing was removed or ` +
        "written. Is --file the whole export?",
    );
  if (!allowMassRemoval) {
    const { gone, total } = await countGone(api, fileIds(), "user");
    if (gone > MASS_REMOVAL && gone * 2 > total)
      throw new Error(
        `${gone} of ${total} users imported from ${api.system} are not in this file: nothing was removed or ` +
          "written. Is --file the whole, latest export? If they really were deleted there, run again with " +
          "--allow-mass-removal.",
      );
  }
  if (named.unnamed.length > 0) {
    report.problem(
      `removal pass not run: ${named.unnamed.slice(0, 3).join(", ")}${named.unnamed.length > 3 ? ", …" : ""} ` +
        "names no user, so the file can't tell who was deleted; nothing was removed",
    );
    return;
  }
  await removeGone({ api, nhostIds: fileIds(), kind: "user", table: TABLE, dryRun, report, progress });
  const { deleted, kept } = report.counts(TABLE);
  if (deleted || kept) progress.done(`${TABLE} (removals)`, report.counts(TABLE));
}
