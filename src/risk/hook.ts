import { toWireUser } from "../auth";
import type { UserRow } from "../db/schema";
import { UnavailableError } from "../errors";
import { callHookAt, MalformedHookAnswer } from "../hooks/call";
import type { HookEndpoint } from "../hooks/config";
import type { Deps } from "../http/deps";
import { DECISIONS, type Decision, type Level } from "./policy";
import type { Signals } from "./signals";

/** The hook's name in the audit (`hook.called`) and the settings (`AUTH_HOOK_BEFORE_SIGN_IN_*`). */
export const HOOK_NAME = "BEFORE_SIGN_IN";
const MAX_REASON = 200;

export interface HookVerdict {
  decision: Decision;
  reason: string | null;
}

/** `{"decision": "allow" | "challenge" | "refuse", "reason"?: string}`; anything else is no answer. */
function readVerdict(body: unknown): HookVerdict {
  const answer = body as { decision?: unknown; reason?: unknown } | null | undefined;
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
    throw new MalformedHookAnswer("the answer is not a JSON object");
  }
  if (!(DECISIONS as readonly unknown[]).includes(answer.decision)) {
    throw new MalformedHookAnswer("decision is not allow, challenge or refuse");
  }
  if (answer.reason !== undefined && answer.reason !== null && typeof answer.reason !== "string") {
    throw new MalformedHookAnswer("reason is not a string");
  }
  const reason = typeof answer.reason === "string" ? answer.reason.slice(0, MAX_REASON) : null;
  return { decision: answer.decision as Decision, reason };
}

/**
 * Asks the app's `BEFORE_SIGN_IN` hook (signed, bounded and guarded as every hook: src/hooks/call.ts), with what the
 * policy would do. Null when it did not answer as it must (unreachable, too slow, not 2xx, not a verdict): the caller
 * applies `AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK`. The call and its outcome are one `hook.called` audit event.
 */
export async function askHook(
  deps: Deps,
  endpoint: HookEndpoint,
  attempt: { user: UserRow; method: string | null; signals: Signals; level: Level },
): Promise<HookVerdict | null> {
  const payload = {
    type: "before-sign-in",
    user: toWireUser(attempt.user),
    method: attempt.method ?? "other",
    signals: attempt.signals,
    level: attempt.level,
  };
  try {
    return await callHookAt(
      deps,
      HOOK_NAME,
      endpoint,
      payload,
      ({ body }) => {
        const verdict = readVerdict(body);
        return { outcome: verdict.decision, value: verdict };
      },
      attempt.user.id,
    );
  } catch (error) {
    if (error instanceof UnavailableError) return null;
    throw error;
  }
}
