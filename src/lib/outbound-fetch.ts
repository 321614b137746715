import { whenAborted } from "./abort";
import { BodyTooLarge, readBoundedText, readTextPrefix } from "./bounded-body";
import { checkOutboundUrl, type OutboundPolicy } from "./outbound-url";

/**
 * One fetch under the outbound-URL policy (contract §1, outbound-url.ts): the URL checked first, then bounded time
 * (headers and body together), bounded size, no redirects, and an accepted content type. Whatever goes wrong is one
 * `OutboundFetchError`, whose message is the same every time: a caller that showed how a fetch failed (refused,
 * timed out, 404, not JSON) would let anyone map which hosts and ports answer behind it. The precise cause is the
 * error's `reason`, for the log only.
 */

export interface OutboundLimits {
  timeoutMs: number;
  maxBytes: number;
  /** The request's `Accept`. */
  accept: string;
  /** Whether the answer's media type (lower case, without parameters) is one the caller reads. */
  mediaType: (type: string) => boolean;
}

export interface OutboundAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** The URL itself is refused by the policy; its reason only restates the URL, so a caller may show it. */
export class OutboundUrlRefused extends Error {
  constructor(readonly reason: string) {
    super(`the URL is not one this service fetches: ${reason}`);
    this.name = "OutboundUrlRefused";
  }
}

export class OutboundFetchError extends Error {
  constructor(
    /** For the log only: how the fetch failed. */
    readonly reason: string,
    /** The answer began and its body broke off (the connection lost mid-way): no whole answer came. */
    readonly cut = false,
  ) {
    super("the URL could not be fetched");
    this.name = "OutboundFetchError";
  }
}

/** `application/json`, or a structured-syntax `+json` type (RFC 6839 §3.1). */
export const isJsonMediaType = (type: string) =>
  type === "application/json" || /^[a-z]+\/[a-z0-9.!#$&^_-]+\+json$/.test(type);

async function bodyOf(response: Response, limits: OutboundLimits, aborted: Promise<never>) {
  try {
    return await readBoundedText(response, limits.maxBytes, aborted);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw new OutboundFetchError(error.message);
    throw new OutboundFetchError(`the body could not be read: ${(error as Error)?.name ?? "error"}`, true);
  }
}

/**
 * GETs `value` under `policy` and `limits`. A 2xx answer of an accepted media type comes back with its body;
 * anything else throws `OutboundUrlRefused` (before any fetch) or `OutboundFetchError`.
 */
export async function fetchOutbound(
  fetcher: typeof fetch,
  value: string,
  policy: OutboundPolicy,
  limits: OutboundLimits,
): Promise<OutboundAnswer> {
  const verdict = checkOutboundUrl(value, policy);
  if (!verdict.ok) throw new OutboundUrlRefused(verdict.reason);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const aborted = whenAborted(signal);
  let response: Response;
  try {
    response = await Promise.race([
      fetcher(verdict.url.href, { redirect: "manual", headers: { accept: limits.accept }, signal }),
      aborted,
    ]);
  } catch (error) {
    throw new OutboundFetchError(`unreachable: ${(error as Error)?.name ?? "error"}`);
  }
  const fail = (reason: string) => {
    response.body?.cancel().catch(() => {});
    return new OutboundFetchError(reason);
  };
  // `redirect: "manual"` hands a redirect back as it is (workerd) or as an opaque answer of status 0 (browsers).
  if (response.status === 0 || (response.status >= 300 && response.status < 400)) {
    throw fail(`answered a redirect (${response.status}), which is not followed`);
  }
  if (response.status < 200 || response.status >= 300) throw fail(`answered ${response.status}`);
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!limits.mediaType(type)) throw fail(`answered the media type "${type.slice(0, 100)}"`);
  const length = Number(response.headers.get("content-length") ?? "0");
  if (length > limits.maxBytes) throw fail(`announced ${length} bytes, more than ${limits.maxBytes}`);
  return {
    status: response.status,
    headers: response.headers,
    text: await bodyOf(response, limits, aborted),
  };
}

export interface OutboundPost {
  headers: Record<string, string>;
  body: string;
  /** Headers and the part of the body kept, together. */
  timeoutMs: number;
  /** How much of the answer's body is read and returned; the rest is left unread. */
  keepBytes: number;
}

/**
 * POSTs `post.body` to `value` under `policy`, for a caller that reports what the receiver answered (webhook
 * deliveries): the URL checked first (`OutboundUrlRefused`, before any fetch), bounded time, a redirect not followed
 * but returned as the answer it is (the body was signed for this URL; following would post it elsewhere), and only
 * the first `keepBytes` of the answer read. Every status comes back; `OutboundFetchError` means no answer came
 * (unreachable, or none in time). The caller is trusted with the status and the answer (an operator's own
 * receiver), unlike `fetchOutbound`'s callers, which must not tell how a fetch failed.
 */
export async function postOutbound(
  fetcher: typeof fetch,
  value: string,
  policy: OutboundPolicy,
  post: OutboundPost,
): Promise<{ status: number; text: string }> {
  const verdict = checkOutboundUrl(value, policy);
  if (!verdict.ok) throw new OutboundUrlRefused(verdict.reason);
  const signal = AbortSignal.timeout(post.timeoutMs);
  const aborted = whenAborted(signal);
  let response: Response;
  try {
    response = await Promise.race([
      fetcher(verdict.url.href, {
        method: "POST",
        redirect: "manual",
        headers: post.headers,
        body: post.body,
        signal,
      }),
      aborted,
    ]);
  } catch (error) {
    const name = (error as Error)?.name ?? "error";
    throw new OutboundFetchError(
      signal.aborted || name === "TimeoutError"
        ? `no answer within ${post.timeoutMs} ms`
        : `unreachable: ${name}`,
    );
  }
  // The status is the answer: a body that stalls or breaks after it costs only the clue the body was.
  const text = await readTextPrefix(response, post.keepBytes, aborted).catch(() => "");
  return { status: response.status, text };
}
