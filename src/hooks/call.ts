import type { Audit } from "../audit/events";
import { UnavailableError } from "../errors";
import { whenAborted } from "../lib/abort";
import { BodyTooLarge, readBoundedText } from "../lib/bounded-body";
import { randomUuid } from "../lib/crypto";
import { checkOutboundUrl } from "../lib/outbound-url";
import { standardWebhookHeaders } from "../lib/standard-webhooks";
import type { HookEndpoint, HookName, HooksConfig } from "./config";

/**
 * One call of an app's hook (contract move-in §5.3): a POST of the JSON payload, signed per Standard Webhooks
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, the
 * `standardwebhooks` library's own signer), answered within 5 s. The hook decides synchronously, so it fails closed:
 * unreachable, too slow, a non-2xx answer, a body that is not JSON or not what the hook answers → 503
 * `service-unavailable` (contract §1, "Unavailable"), and the caller does nothing of what it was about to do. Every
 * call and its outcome is one `hook.called` audit event ({hook, outcome, status, ms}).
 */

export const HOOK_TIMEOUT_MS = 5_000;
/** An answer is a decision or a set of claims: anything longer is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface HookDeps {
  config: { hooks: HooksConfig };
  outbound: typeof fetch;
  audit: Audit;
}

/** What the hook answered: its status and its body parsed as JSON (`undefined` when empty, as a 204). */
export interface HookAnswer {
  status: number;
  body: unknown;
}

/** The answer is 2xx JSON but not what this hook answers: thrown by a hook's reader, a failure like the others. */
export class MalformedHookAnswer extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "MalformedHookAnswer";
  }
}

class HookFailure extends Error {
  constructor(
    readonly outcome: "unreachable" | "timeout" | "bad-status" | "malformed",
    reason: string,
    readonly status: number | null = null,
  ) {
    super(reason);
  }
}

export function isHookConfigured(deps: { config: { hooks: HooksConfig } }, name: HookName): boolean {
  return deps.config.hooks[name] !== undefined;
}

/** The signed request of one call: a fresh id per call, the current time, the exact bytes that are sent. */
export function signedRequest(secret: string, body: string, at = new Date()): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json",
    ...standardWebhookHeaders(secret, `msg_${randomUuid()}`, body, at),
  };
}

async function post(
  deps: Pick<HookDeps, "outbound">,
  url: string,
  secret: string,
  body: string,
): Promise<HookAnswer> {
  // A timer of our own rather than AbortSignal.timeout: cleared as soon as the answer is in, and a test can move it.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("the hook did not answer in time", "TimeoutError")),
    HOOK_TIMEOUT_MS,
  );
  try {
    return await postWithin(deps, url, secret, body, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function postWithin(
  deps: Pick<HookDeps, "outbound">,
  url: string,
  secret: string,
  body: string,
  signal: AbortSignal,
): Promise<HookAnswer> {
  const aborted = whenAborted(signal);
  const failed = (error: unknown, outcome: "unreachable" | "malformed", what: string) => {
    if (error instanceof HookFailure) return error;
    if (signal.aborted || (error as Error)?.name === "TimeoutError") {
      return new HookFailure("timeout", `no answer within ${HOOK_TIMEOUT_MS} ms`);
    }
    return new HookFailure(outcome, `${what}: ${(error as Error)?.name ?? "error"}`);
  };
  let response: Response;
  try {
    response = await Promise.race([
      deps.outbound(url, {
        method: "POST",
        redirect: "manual",
        headers: signedRequest(secret, body),
        body,
        signal,
      }),
      aborted,
    ]);
  } catch (error) {
    throw failed(error, "unreachable", "unreachable");
  }
  // A redirect comes back as it is (`redirect: "manual"`) and is not followed: the body was signed for this URL.
  if (response.status < 200 || response.status >= 300) {
    response.body?.cancel().catch(() => {});
    throw new HookFailure("bad-status", `answered ${response.status}`, response.status);
  }
  let text: string;
  try {
    text = await readBoundedText(response, MAX_ANSWER_BYTES, aborted).catch((error) => {
      throw error instanceof BodyTooLarge
        ? new HookFailure("malformed", `answer over ${MAX_ANSWER_BYTES} bytes`)
        : error;
    });
  } catch (error) {
    throw failed(error, "unreachable", "the answer could not be read");
  }
  if (text.trim() === "") return { status: response.status, body: undefined };
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    throw new HookFailure("malformed", "the answer is not JSON", response.status);
  }
}

/**
 * Calls hook `name` (which must be configured) with `payload`; `read` turns the answer into what the caller needs and
 * names the outcome for the audit log ("continue", "reject", …), or throws `MalformedHookAnswer`. Every failure is
 * one `UnavailableError` whose reason (the log only) says what went wrong; the client sees the generic 503.
 */
export async function callHook<T>(
  deps: HookDeps,
  name: HookName,
  payload: unknown,
  read: (answer: HookAnswer) => { outcome: string; value: T },
  userId: string | null = null,
): Promise<T> {
  const endpoint = deps.config.hooks[name];
  if (!endpoint) throw new Error(`hook ${name} is not configured`);
  return callHookAt(deps, name, endpoint, payload, read, userId);
}

/**
 * The same call at `endpoint`: a hook a feature configures in its own settings (config.ts `parseHook`), named `name`
 * in the audit log and the 503's reason. The payload is never in either.
 */
export async function callHookAt<T>(
  deps: Pick<HookDeps, "outbound" | "audit">,
  name: string,
  endpoint: HookEndpoint,
  payload: unknown,
  read: (answer: HookAnswer) => { outcome: string; value: T },
  userId: string | null = null,
): Promise<T> {
  const started = Date.now();
  try {
    // The outbound-URL policy (contract §1) but its rule against the service's own hosts: the operator wrote this
    // URL, and an app's backend often shares its front-end's host (docs/decisions.md, "Hooks").
    const verdict = checkOutboundUrl(endpoint.url, {
      allowLoopback: endpoint.allowLoopback,
      refusedHosts: [],
      refusedLoopbackPorts: [],
    });
    if (!verdict.ok) throw new HookFailure("unreachable", `the URL is refused: ${verdict.reason}`);
    const answer = await post(deps, endpoint.url, endpoint.secret, JSON.stringify(payload));
    const { status } = answer;
    let result: { outcome: string; value: T };
    try {
      result = read(answer);
    } catch (error) {
      if (error instanceof MalformedHookAnswer) throw new HookFailure("malformed", error.message, status);
      throw error;
    }
    deps.audit({
      type: "hook.called",
      userId,
      detail: { hook: name, outcome: result.outcome, status, ms: Date.now() - started },
    });
    return result.value;
  } catch (error) {
    if (!(error instanceof HookFailure)) throw error;
    deps.audit({
      type: "hook.called",
      userId,
      detail: {
        hook: name,
        outcome: error.outcome,
        status: error.status,
        ms: Date.now() - started,
        reason: error.message,
      },
    });
    throw new UnavailableError(`hook ${name}: ${error.message}`);
  }
}
