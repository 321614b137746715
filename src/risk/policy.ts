import { ConfigError } from "../errors";

/**
 * The risk levels and what the policy does at each (`AUTH_RISK_POLICY`, docs/risk.md): `allow`, `challenge` (a second
 * step first: the user's own second factor, else a code mailed to them), `refuse` (403 `risk-refused`).
 */
export const LEVELS = ["low", "medium", "high"] as const;
export type Level = (typeof LEVELS)[number];
export const DECISIONS = ["allow", "challenge", "refuse"] as const;
export type Decision = (typeof DECISIONS)[number];
export type Policy = Readonly<Record<Level, Decision>>;

export const DEFAULT_POLICY: Policy = { low: "allow", medium: "allow", high: "challenge" };

/** How strict each decision is: a decision is only ever replaced by one of these, never guessed between. */
export const STRICTNESS: Readonly<Record<Decision, number>> = { allow: 0, challenge: 1, refuse: 2 };

/**
 * `low=allow,medium=challenge,high=refuse`: each level at most once, a level not named keeps its default, and a
 * higher level never gets a milder decision than a lower one (a policy that refuses `medium` but allows `high` is a
 * typo, not a policy). Anything else stops the start with the variable's name.
 */
export function parsePolicy(value: string | undefined): Policy {
  if (value === undefined || value.trim() === "") return DEFAULT_POLICY;
  const bad = (why: string) =>
    new ConfigError(
      `invalid configuration: AUTH_RISK_POLICY ${why} (expected e.g. low=allow,medium=challenge,high=refuse)`,
    );
  const policy: Record<Level, Decision> = { ...DEFAULT_POLICY };
  const named = new Set<string>();
  for (const part of value.split(",")) {
    const match = /^\s*([a-z]+)\s*=\s*([a-z]+)\s*$/.exec(part);
    if (!match) throw bad(`has "${part.trim()}", not level=decision`);
    const [, level, decision] = match as unknown as [string, string, string];
    if (!(LEVELS as readonly string[]).includes(level))
      throw bad(`names the level "${level}" (low, medium, high)`);
    if (!(DECISIONS as readonly string[]).includes(decision)) {
      throw bad(`gives "${level}" the decision "${decision}" (allow, challenge, refuse)`);
    }
    if (named.has(level)) throw bad(`names "${level}" twice`);
    named.add(level);
    policy[level as Level] = decision as Decision;
  }
  for (let i = 1; i < LEVELS.length; i++) {
    const [lower, higher] = [LEVELS[i - 1]!, LEVELS[i]!];
    if (STRICTNESS[policy[higher]] < STRICTNESS[policy[lower]]) {
      throw bad(`gives "${higher}" (${policy[higher]}) less than "${lower}" (${policy[lower]})`);
    }
  }
  return policy;
}
