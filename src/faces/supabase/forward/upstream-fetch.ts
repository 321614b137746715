import { whenAborted } from "../../../lib/abort";

/**
 * One call to the upstream with a bound on the time to its answer's first byte (contract supabase.md §4: "never a
 * hang"), and what the caller gets when there is no answer: 502, 503 or 504 in PostgREST's error shape
 * (`{code, details, hint, message}`), which postgrest-js, functions-js and an app's error handling read. The body
 * streams after the headers without a bound: an Edge Function may stream for as long as it runs.
 */

/** The time to the first byte: what Supabase's own gateway waits for an upstream before it gives up. */
export const FIRST_BYTE_TIMEOUT_MS = 60_000;

export type GatewayFailure = 502 | 503 | 504;

const FAILURES: Record<GatewayFailure, { code: string; message: string }> = {
  502: { code: "bad_gateway", message: "The data API answered with something that is not an HTTP answer" },
  503: { code: "upstream_unavailable", message: "The data API could not be reached" },
  504: { code: "upstream_timeout", message: "The data API did not answer in time" },
};

/** A failure of the upstream as the caller sees it: no internals (which host, which port refused) are told. */
export function gatewayFailure(status: GatewayFailure): Response {
  const { code, message } = FAILURES[status];
  return Response.json(
    { code, details: null, hint: null, message },
    { status, headers: { "Cache-Control": "no-store" } },
  );
}

export class UpstreamFailed extends Error {
  constructor(
    readonly status: GatewayFailure,
    readonly reason: string,
  ) {
    super(`the upstream failed: ${reason}`);
    this.name = "UpstreamFailed";
  }
}

/**
 * What a failed fetch says of the upstream: no answer in time, 504; no answer at all, 502, as a reverse proxy answers
 * a refused connection (the runtime's fetch says "Network connection lost." alike for a connection refused and one
 * dropped before the answer's head, so the two cannot be told apart here).
 */
function failureOf(error: unknown, timedOut: boolean): UpstreamFailed {
  if (timedOut) return new UpstreamFailed(504, "no answer in time");
  return new UpstreamFailed(502, String((error as Error)?.message ?? error));
}

/**
 * Cloudflare's own answers for an origin behind it that failed (a Supabase project is behind it): the origin down or
 * refusing (521), 503; a connection or an answer that timed out (522, 524), 504; any other of its 52x, 502. They are
 * Cloudflare's HTML pages, which no client of the data API reads.
 */
export function cloudflareFailure(status: number): GatewayFailure | null {
  if (status < 520 || status > 530) return null;
  if (status === 521) return 503;
  return status === 522 || status === 524 ? 504 : 502;
}

/** `fetcher(url, init)` within the first-byte bound; throws `UpstreamFailed` when no answer comes. */
export async function fetchUpstream(
  fetcher: typeof fetch,
  url: string,
  init: RequestInit,
): Promise<Response> {
  const deadline = AbortSignal.timeout(FIRST_BYTE_TIMEOUT_MS);
  // The deadline aborts the fetch until the head arrives, and then no longer: the body streams on past it.
  const controller = new AbortController();
  const abort = () => controller.abort(deadline.reason);
  deadline.addEventListener("abort", abort, { once: true });
  try {
    return await Promise.race([fetcher(url, { ...init, signal: controller.signal }), whenAborted(deadline)]);
  } catch (error) {
    throw failureOf(error, deadline.aborted);
  } finally {
    deadline.removeEventListener("abort", abort);
  }
}
