import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { AppError } from "../errors";
import { whenAborted } from "../lib/abort";
import type { TurnstileConfig, TurnstileEndpoint } from "../settings/turnstile";
import type { AppEnv } from "./app-env";
import type { Deps } from "./deps";
import { documentedHeader } from "./documented";
import { TURNSTILE_HEADER } from "./visitor";

/**
 * Cloudflare Turnstile (contract §9), wire-compatible with Nhost: the client sends the widget's token in the
 * `x-cf-turnstile-response` header, and the endpoints `AUTH_TURNSTILE_ENDPOINTS` names require a token that
 * Cloudflare's siteverify accepts. It fails closed: no header is `400 turnstile-required`; a token siteverify refuses,
 * solved on a host this deployment does not serve, or for another action is `403 turnstile-failed`; siteverify
 * unreachable, slow, or answering something that is not its JSON is `503 turnstile-unavailable`. Never a 500, never
 * a pass.
 *
 * Tokens are single use at siteverify itself: a second verification of the same token answers
 * `timeout-or-duplicate`. The idempotency key makes our own retry (after a transport failure) the same
 * verification, not a second one that would fail as a duplicate.
 */

const ATTEMPT_TIMEOUT_MS = 2500;
const ATTEMPTS = 2;

const siteverifyAnswer = z.object({
  success: z.boolean(),
  "error-codes": z.array(z.string()).default([]),
  hostname: z.string().optional(),
  action: z.string().optional(),
});
type SiteverifyAnswer = z.infer<typeof siteverifyAnswer>;

/** siteverify's error codes that mean our configuration is wrong, not the visitor's token. */
const CONFIGURATION_ERRORS = new Set(["missing-input-secret", "invalid-input-secret", "bad-request"]);

export interface TurnstileCheck {
  token: string;
  remoteIp: string | null;
  endpoint: TurnstileEndpoint;
  /** The widget actions a token may carry: `endpoint`'s alone unless the request is guarded under two names. */
  actions?: readonly TurnstileEndpoint[];
}

/** One siteverify call, retried once on a transport failure or a 5xx with the same idempotency key. */
async function siteverify(
  settings: TurnstileConfig,
  outbound: typeof fetch,
  check: TurnstileCheck,
): Promise<SiteverifyAnswer> {
  const body = {
    secret: settings.secret,
    response: check.token,
    ...(check.remoteIp ? { remoteip: check.remoteIp } : {}),
    idempotency_key: crypto.randomUUID(),
  };
  let problem = "no attempt";
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    let response: Response;
    const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    const aborted = whenAborted(signal);
    try {
      response = await Promise.race([
        outbound(settings.verifyUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal,
        }),
        aborted,
      ]);
    } catch (error) {
      problem = `siteverify unreachable: ${(error as Error).name}`;
      continue;
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      problem = `siteverify answered ${response.status}`;
      continue;
    }
    let parsed: ReturnType<typeof siteverifyAnswer.safeParse>;
    try {
      // The body too keeps to the attempt's time: headers at once and a body that stalls is no answer.
      parsed = siteverifyAnswer.safeParse(await Promise.race([response.json(), aborted]));
    } catch {
      response.body?.cancel().catch(() => {});
      const why = signal.aborted ? "its answer's body did not arrive in time" : "its answer is not JSON";
      throw new AppError(
        "turnstile-unavailable",
        undefined,
        `siteverify answered ${response.status}; ${why}`,
      );
    }
    if (!parsed.success) {
      throw new AppError("turnstile-unavailable", undefined, "siteverify answered JSON of another shape");
    }
    return parsed.data;
  }
  throw new AppError("turnstile-unavailable", undefined, problem);
}

/**
 * Checks a token for `endpoint`. Passes only on `success`, a hostname this deployment serves, and an action that is
 * the endpoint's name (or one of `actions`) or none (clients written for Nhost do not set one; the built-in page does).
 */
export async function verifyTurnstile(
  settings: TurnstileConfig,
  outbound: typeof fetch,
  check: TurnstileCheck,
): Promise<void> {
  const answer = await siteverify(settings, outbound, check);
  const codes = answer["error-codes"];
  if (!answer.success) {
    if (codes.some((code) => CONFIGURATION_ERRORS.has(code) || code === "internal-error")) {
      // Not the visitor's fault: logged for the operator, a 503 for the visitor.
      console.error(`turnstile: siteverify refused the configuration (${codes.join(", ")})`);
      throw new AppError("turnstile-unavailable", undefined, codes.join(","));
    }
    throw new AppError("turnstile-failed", undefined, codes.join(",") || "not successful");
  }
  if (!answer.hostname || !settings.hostnames.has(answer.hostname.toLowerCase())) {
    throw new AppError("turnstile-failed", undefined, `solved on ${answer.hostname ?? "no host"}`);
  }
  const actions: readonly string[] = check.actions ?? [check.endpoint];
  if (answer.action && !actions.includes(answer.action)) {
    throw new AppError(
      "turnstile-failed",
      undefined,
      `action ${answer.action}, expected ${actions.join(" or ")}`,
    );
  }
}

/** Cloudflare's tokens are at most 2048 characters; a longer one is not one. */
const MAX_TOKEN_LENGTH = 2048;

export type GateDeps = Pick<Deps, "config" | "env" | "outbound" | "now" | "visitor">;

/**
 * Requires a passed Turnstile challenge when the deployment guards one of `endpoints` (the first guarded one names
 * the check; a token solved for any of them, or for no action, passes). `token` is a page form's; the API's comes
 * in the header. Passes at once when this request already passed one.
 */
export async function passChallenge(
  deps: GateDeps,
  endpoints: readonly TurnstileEndpoint[],
  token: string | null = deps.visitor.turnstileToken,
): Promise<void> {
  const settings = deps.config.turnstile;
  const guarded = endpoints.find((endpoint) => settings?.endpoints.has(endpoint));
  if (!settings || !guarded || deps.visitor.passedChallenge) return;
  if (!token) throw new AppError("turnstile-required");
  if (token.length > MAX_TOKEN_LENGTH) throw new AppError("turnstile-failed", undefined, "token too long");
  await verifyTurnstile(settings, deps.outbound, {
    token,
    remoteIp: deps.visitor.address,
    endpoint: guarded,
    actions: endpoints,
  });
  deps.visitor.passedChallenge = true;
}

/**
 * Requires a passed Turnstile challenge on this route when Turnstile is configured and guards `endpoint`. Routes
 * that can create a user use `signUpChecks` (sign-up-gate.ts) instead, which also applies `signup`.
 */
export function turnstile(endpoint: TurnstileEndpoint) {
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    // A rate limit counted beside the handler (src/rate-limits/middleware.ts `rateLimitBeside`) has counted before a
    // challenge is sent to siteverify, as when it counts before the handler: a flood is refused without it.
    if (c.var.pendingCount && c.var.config.turnstile?.endpoints.has(endpoint)) await c.var.pendingCount;
    await passChallenge(c.var.deps, [endpoint]);
    return next();
  });
  return documentedHeader(middleware, turnstileHeaderDoc(endpoint));
}

/** The header's description on an operation guarded under `endpoint` (and `alsoEndpoint`, if given). */
export function turnstileHeaderDoc(endpoint: TurnstileEndpoint, alsoEndpoint?: TurnstileEndpoint) {
  const names = alsoEndpoint ? `\`${endpoint}\` or \`${alsoEndpoint}\`` : `\`${endpoint}\``;
  return {
    name: TURNSTILE_HEADER,
    description:
      `A Cloudflare Turnstile token (widget action ${names}). Required when \`AUTH_TURNSTILE_SECRET\` is set ` +
      `and \`AUTH_TURNSTILE_ENDPOINTS\` includes ${names}: missing, 400 \`turnstile-required\`; not passed, ` +
      "403 `turnstile-failed`; siteverify unreachable, 503 `turnstile-unavailable`.",
  };
}
