/**
 * Whether an audit event records something that worked or something refused, and a reason code for it (contract
 * operators.md §4), decided in one place from what the flow already records, so that no call site has to repeat it:
 * - `failure`: a refused sign-in (`signin.failure`, its `.repeated` roll-up, a wrong admin secret at the console's
 *   door: `…-failed`), a replayed refresh token, a factor locked, a hook that did not answer as it must;
 * - `success`: everything else (the flow recorded it because it happened).
 * The reason code is the event's own code when its detail has one — a failure's `error` (`invalid-email-password`), a
 * hook's `outcome` (`timeout`), a sign-in's `method` (`email-password`) — else the event type itself.
 */
export type Outcome = "success" | "failure";

const FAILED_TYPES = new Set(["refresh.replay", "signin.locked"]);
/** `signin.failure`, `signin.failure.repeated`, `admin.console.sign-in-failed`. */
const FAILED_PATTERN = /(^|\.)failure(\.|$)|-failed$/;
/** How a hook call fails (src/hooks/call.ts `HookFailure`); its other outcomes are the app's answers. */
const HOOK_FAILURES = new Set(["unreachable", "timeout", "bad-status", "malformed"]);

/** A code is a short token: a free-text message (a hook's error) is not one. */
const CODE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

function codeIn(detail: Record<string, unknown>): string | null {
  for (const key of ["error", "outcome", "method"]) {
    const value = detail[key];
    if (typeof value === "string" && CODE.test(value)) return value;
  }
  return null;
}

export function outcomeOf(
  type: string,
  detail: Record<string, unknown>,
  given: { outcome?: Outcome; reason?: string } = {},
): { outcome: Outcome; reason: string } {
  const hookFailed = type === "hook.called" && HOOK_FAILURES.has(String(detail.outcome));
  const outcome =
    given.outcome ??
    (FAILED_TYPES.has(type) || FAILED_PATTERN.test(type) || hookFailed ? "failure" : "success");
  const reason = given.reason && CODE.test(given.reason) ? given.reason : (codeIn(detail) ?? type);
  return { outcome, reason };
}
