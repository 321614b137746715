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
 * What a failed fetch says of the upstream: no answer in time (504); a connection refused or a name that does not
 * resolve, nothing was sent (503); a connection that broke while the request or the answer's head was under way (502).
 */
function failureOf(error: unknown, timedOut: boolean): UpstreamFailed {
  if (timedOut) return new UpstreamFailed(504, "no answer in time");
  const message = String((error as Error)?.message ?? error);
  if (/refused|ECONNREFUSED|resolve|DNS|connect/i.test(message)) return new UpstreamFailed(503, message);
  return new UpstreamFailed(502, message);
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
