import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { parseHook } from "../hooks/config";
import { bool, settingsSlice } from "../settings/kit";
import { parsePolicy } from "./policy";

/**
 * Risk-aware sign-in (issue 47, docs/risk.md): the policy per level, whether a disposable address may sign up at all,
 * and the app's `BEFORE_SIGN_IN` hook (URL and `whsec_` secret checked as every hook's, src/hooks/config.ts) with
 * what stands when it fails: the policy's own decision, or a refusal. Never nothing (an open door).
 */
const vars = z.object({
  AUTH_RISK_POLICY: z.string().optional(),
  AUTH_RISK_BLOCK_DISPOSABLE_EMAILS: bool(false),
  AUTH_HOOK_BEFORE_SIGN_IN_URL: z.string().optional(),
  AUTH_HOOK_BEFORE_SIGN_IN_SECRET: z.string().optional(),
  AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK: z.string().optional(),
});

export type HookFallback = "policy" | "refuse";

const resolve = (data: z.output<typeof vars>, core: CoreConfig, env: Readonly<Record<string, unknown>>) => {
  const fallback = data.AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK?.trim() || "policy";
  if (fallback !== "policy" && fallback !== "refuse") {
    throw new ConfigError(
      "invalid configuration: AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK must be policy or refuse",
    );
  }
  return {
    risk: {
      policy: parsePolicy(data.AUTH_RISK_POLICY),
      blockDisposableEmails: data.AUTH_RISK_BLOCK_DISPOSABLE_EMAILS,
      /** Null: no hook, the policy decides. */
      hook: parseHook(env, "BEFORE_SIGN_IN", core.outbound.allowLocal) ?? null,
      hookFallback: fallback as HookFallback,
    },
  };
};

export const riskSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type RiskSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends RiskSettings {}
}
