// The service's import API (/tmp/issue29/wire.md) as the command calls it: admin.mjs's server and secret, with retries.
// Every call is safe to repeat (the server is idempotent), so a transient failure (a network error, 502/503/504, as a
// deployment restarts or D1 is briefly overloaded) is retried with backoff; after that the run stops, naming the URL,
// and the next run carries on where it stopped.

const TRANSIENT = new Set([502, 503, 504]);
const DELAYS_MS = [1_000, 2_000, 4_000, 8_000];

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` (which returns a Response, or throws on a network error) until it answers something that is not
 * transient, waiting `delays` between tries. Returns {response} or, when every try failed, {error} (the last network
 * error) / {response} (the last transient answer). `giveUp(error)`: a thrown error that retrying can't fix.
 */
export async function withRetries(attempt, { delays = DELAYS_MS, giveUp = () => false, wait = sleep } = {}) {
  for (let i = 0; ; i++) {
    let response;
    try {
      response = await attempt();
    } catch (error) {
      if (giveUp(error) || i >= delays.length) return { error };
      await wait(delays[i]);
      continue;
    }
    if (!TRANSIENT.has(response.status) || i >= delays.length) return { response };
    await response.body?.cancel().catch(() => {});
    const retryAfter = Number(response.headers.get("retry-after"));
    await wait(
      Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 30_000) : delays[i],
    );
  }
}

/** What a failed request gives up with, for `cli.fail`. */
function networkFailure(cli, url, error) {
  const cause = error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
  return `${cli.unreachable(url)} (${cause}, ${DELAYS_MS.length + 1} tries). Nothing is lost: run the command again to carry on.`;
}

async function answerOf(response) {
  const text = await response.text();
  try {
    return { text, answer: text ? JSON.parse(text) : null };
  } catch {
    return { text, answer: null };
  }
}

/**
 * The import API for one run from one `system` (`nhost`, `supabase`, or import-users' `--from`): its users, buckets
 * and files, its ledger pages and its removals carry the system, here in one place, so that no command can write users under one system and
 * then list or remove them under another, where they would be "deleted" users (docs/decisions.md, "Issue 44: one
 * ledger, many systems").
 */
export function importApi(cli, { system = "nhost" } = {}) {
  const url = (path) => {
    // The ledger page and a file's PUT name the system in the query; the other calls in their bodies (withSystem).
    const inQuery = path.startsWith("/ledger") || (path.startsWith("/files/") && path !== "/files/plan");
    const query = inQuery ? `${path.includes("?") ? "&" : "?"}system=${system}` : "";
    return `${cli.server}/admin/import/nhost${path}${query}`;
  };
  const withSystem = (path, body) =>
    ["/users", "/removals", "/buckets", "/files/plan"].includes(path) &&
    body !== null &&
    typeof body === "object"
      ? { ...body, system }
      : body;

  /**
   * One request to the import API. Answers {ok, status, answer, text} for any final answer; with `strict` (the
   * default) a final answer that is not ok stops the run (exit 1) with the server's message and the URL.
   * `body`: an object (sent as JSON) or a function returning a fresh fetch body for each try (a stream can be sent
   * only once). `giveUp`: see withRetries.
   */
  async function request(method, path, { body: given, headers = {}, strict = true, giveUp } = {}) {
    const target = url(path);
    const body = withSystem(path, given);
    const secret = cli.secret();
    const { response, error } = await withRetries(
      () =>
        fetch(target, {
          method,
          headers: {
            "x-hasura-admin-secret": secret,
            ...(body && typeof body !== "function" ? { "content-type": "application/json" } : {}),
            ...headers,
          },
          ...(typeof body === "function"
            ? { body: body(), duplex: "half" }
            : body
              ? { body: JSON.stringify(body) }
              : {}),
        }),
      { giveUp },
    );
    if (error) {
      if (giveUp?.(error)) throw error;
      cli.fail(networkFailure(cli, target, error));
    }
    const { text, answer } = await answerOf(response);
    const result = { ok: response.ok, status: response.status, answer, text, url: target };
    if (strict && !response.ok) failWith(method, result);
    return result;
  }

  /** Stops the run (exit 1) with a final answer that is not ok: the URL, the status, the server's message. */
  function failWith(method, result) {
    const again = TRANSIENT.has(result.status)
      ? ` (after ${DELAYS_MS.length + 1} tries; nothing is lost: run the command again to carry on)`
      : "";
    cli.fail(`${cli.failure(method, result.url, result.status, result.answer, result.text)}${again}`);
  }

  return {
    system,
    url,
    request,
    failWith,
    post: async (path, body, options) => (await request("POST", path, { body, ...options })).answer,
    get: async (path) => (await request("GET", path)).answer,
  };
}
