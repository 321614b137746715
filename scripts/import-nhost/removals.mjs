// Deletions for a delta run: what an earlier run imported (the service's ledger) and Nhost no longer has. Both sides
// are streams of ids sorted ascending in byte order (the ledger's `GET …/ledger` pages, Nhost's `ORDER BY id`), so a
// merge walks them in step with constant memory, whatever their size.

/**
 * The ids of `ledger` that are not in `nhost`. Both must ascend strictly in byte order (JavaScript's string order is
 * UTF-16 code-unit order, the same as byte order for the ASCII ids here); if either does not, this throws rather than
 * guess, since a wrong order would delete rows that Nhost still has.
 */
export async function* missingFrom(ledger, nhost) {
  const theirs = ascending(nhost, "Nhost's ids");
  let next = await theirs.next();
  for await (const id of ascending(ledger, "the service's ledger")) {
    while (!next.done && next.value < id) next = await theirs.next();
    if (next.done || next.value !== id) yield id;
  }
}

async function* ascending(ids, what) {
  let previous = null;
  for await (const id of ids) {
    if (previous !== null && !(previous < id))
      throw new Error(`${what} are not in ascending byte order (${previous} before ${id}): nothing removed`);
    previous = id;
    yield id;
  }
}

/** The service's ledger of a kind, page by page (`GET /import/nhost/ledger`), as one stream of ids. */
export async function* ledgerIds(api, kind) {
  let after = null;
  for (;;) {
    const query = new URLSearchParams({ kind, limit: "1000", ...(after === null ? {} : { after }) });
    const page = await api.get(`/ledger?${query}`);
    yield* page.items;
    if (!page.next) return;
    after = page.next;
  }
}

/** Groups of at most `size` from a stream. */
export async function* batches(items, size) {
  let batch = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Whether Nhost's table has no rows while earlier runs imported some of it. That is far likelier a wrong
 * --database-url (another project, an empty database) than a project that deleted everything: the command then
 * removes nothing at all, and says so.
 */
export async function emptiedInNhost(api, nhostIds, kind) {
  for await (const _ of nhostIds) return false;
  const earlier = await api.get(`/ledger?${new URLSearchParams({ kind, limit: "1" })}`);
  return earlier.items.length > 0;
}

/**
 * How many of the ids earlier runs imported are gone from Nhost's table, of how many. A delta run removes a few; a
 * run against another project's database would remove nearly all (the command then removes nothing unless told to).
 */
export async function countGone(api, nhostIds, kind) {
  let total = 0;
  const counted = (async function* () {
    for await (const id of ledgerIds(api, kind)) {
      total++;
      yield id;
    }
  })();
  let gone = 0;
  for await (const _ of missingFrom(counted, nhostIds)) gone++;
  return { gone, total };
}

/** Removals of more than half of what was imported (and more than this many) need --allow-mass-removal. */
export const MASS_REMOVAL = 20;

/** One removal pass: deletes here what was imported before and is gone from Nhost's `table`. */
export async function removeGone({ api, nhostIds, kind, table, dryRun, report, progress }) {
  const counts = report.counts(table);
  for await (const ids of batches(missingFrom(ledgerIds(api, kind), nhostIds), 100)) {
    const { results } = await api.post("/removals", { dryRun, kind, ids });
    for (const result of results) {
      if (result.outcome === "deleted") counts.deleted++;
      else if (result.outcome === "kept") {
        counts.kept++;
        for (const reason of result.reasons ?? []) report.leftOut(reason.table ?? table, reason.reason);
      }
    }
    progress.update(`${table} (removals)`, counts);
  }
}
