// The import API's batches: at most 100 rows per call (the wire's limit), and a body the service takes. The service's
// body limit is not announced, so the first guess is generous and a 413 halves it: the batch is split and sent again,
// and later batches start from the smaller budget. A row too large to go alone is skipped and reported.

/** At most this many rows per call (the wire's limit). */
const BATCH_ROWS = 100;
/** The first guess at the largest request body the service takes. */
const FIRST_BUDGET = 1024 * 1024;
/** Never split below this: a body of a few KiB that is still refused is one row too large. */
const SMALLEST_BUDGET = 4096;

const size = (value) => Buffer.byteLength(JSON.stringify(value));

/**
 * `send(path, key, items, extra)`: POSTs `{...extra, [key]: batch}` for each batch of `items` and answers one result
 * per item, in the items' order.
 */
export function batchSender(api) {
  let budget = FIRST_BUDGET;
  return async function send(path, key, items, extra = {}) {
    const results = [];
    let queue = chunks(items, budget, key);
    while (queue.length > 0) {
      const batch = queue.shift();
      const body = { ...extra, [key]: batch };
      const answer = await api.request("POST", path, { body, strict: false });
      if (answer.status === 413) {
        if (batch.length === 1) {
          const { id } = batch[0];
          results.push({
            id,
            outcome: "skipped",
            reasons: [{ id, reason: "too large for one request to the service" }],
          });
          continue;
        }
        budget = Math.max(SMALLEST_BUDGET, Math.floor(Math.min(budget, size(body)) / 2));
        queue = [...chunks(batch, budget, key), ...queue];
        continue;
      }
      if (!answer.ok) api.failWith("POST", answer);
      results.push(...inOrder(batch, answer.answer?.results ?? []));
    }
    return results;
  };
}

/** Groups of at most 100 items whose JSON body stays under `budget` bytes (an item larger alone is its own group). */
export function chunks(items, budget, key = "items") {
  const empty = size({ dryRun: false, [key]: [] });
  const out = [];
  let batch = [];
  let bytes = empty;
  for (const item of items) {
    const itemBytes = size(item) + 1; // and its comma
    if (batch.length > 0 && (batch.length === BATCH_ROWS || bytes + itemBytes > budget)) {
      out.push(batch);
      batch = [];
      bytes = empty;
    }
    batch.push(item);
    bytes += itemBytes;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** The service's results matched to the items sent: by position, checked by id; by id when they disagree. */
export function inOrder(batch, results) {
  if (results.length === batch.length && results.every((result, i) => result.id === batch[i].id))
    return results;
  const byId = new Map(results.map((result) => [result.id, result]));
  return batch.map(
    (item) =>
      byId.get(item.id) ?? {
        id: item.id,
        outcome: "skipped",
        reasons: [{ reason: "no result from the service" }],
      },
  );
}
