import type { GateDecision, SessionGate } from "../auth";
import { AppError } from "../errors";
import { askHook } from "./hook";
import { type Decision, STRICTNESS } from "./policy";
import { levelOf } from "./score";
import { gatherSignals } from "./signals";

/** Who decided: the policy, the app's hook, or the fallback for a hook that did not answer. */
export type DecidedBy = "policy" | "hook" | "hook-fallback";

/**
 * The gate after every first factor (src/auth/sign-in/hooks.ts `SessionGate`): the signals, their level, the
 * policy's decision for it, the app's hook when set (its answer replaces the policy's; no answer is the fallback's,
 * never an open door), then the one rule nothing overrides: a device that signed in before and kept our cookie, with
 * the right first factor, is never refused (at worst asked for a second step), so a stranger's behaviour, or a
 * country's bad name, cannot lock the owner out of their own account on their own browser. All of it goes to the
 * audit (`signin.risk`) unless the sign-in was low and simply allowed, and the level to the new-device mail.
 */
export const assessSignIn: SessionGate = async (scope, { user, method }) => {
  const { deps } = scope;
  const { risk } = deps.config;
  const signals = await gatherSignals(scope, user);
  const { level, reasons } = levelOf(signals);
  let decision: Decision = risk.policy[level];
  let by: DecidedBy = "policy";
  let hookReason: string | null = null;
  if (risk.hook) {
    const verdict = await askHook(deps, risk.hook, { user, method, signals, level });
    if (verdict) {
      decision = verdict.decision;
      hookReason = verdict.reason;
      by = "hook";
    } else {
      by = "hook-fallback";
      if (risk.hookFallback === "refuse") decision = "refuse";
    }
  }
  const ownDevice = signals.device === "cookie";
  const capped = ownDevice && STRICTNESS[decision] > STRICTNESS.challenge;
  if (capped) decision = "challenge";
  deps.visitor.riskLevel = level;
  // A calm sign-in the policy let through is the `signin.success` that follows: no audit row of its own (a D1 write
  // on every sign-in). Anything else is recorded: a level above low, a step or a refusal, the app's word.
  if (level === "low" && decision === "allow" && by === "policy") return gateDecision(decision);
  deps.audit({
    type: "signin.risk",
    userId: user.id,
    detail: {
      method: method ?? "other",
      level,
      reasons,
      decision,
      by,
      ...(hookReason !== null ? { hookReason } : {}),
      ...(capped ? { capped: "known-device" } : {}),
      signals,
    },
    ...(decision === "refuse"
      ? { outcome: "failure" as const, reason: "risk-refused" }
      : { reason: decision }),
  });
  return gateDecision(decision);
};

function gateDecision(decision: Decision): GateDecision {
  if (decision === "refuse") return { decision, error: new AppError("risk-refused") };
  return { decision };
}
