import type { Deps } from "../http/deps";
import { isNonPublicAddress } from "../http/visitor";
import { addressKey } from "../rate-limits/client-address";

/**
 * Velocity: how many sign-ins got past their first factor from one address, and from one network (ASN), lately.
 * Counted in the rate limits' own sliding-window objects (src/rate-limits/rate-limiter.ts, `RATE_LIMITERS`) under
 * keys of their own (`RISK:ip:…`, `RISK:asn:…`): no table, one object call each, and the object forgets a key two
 * windows after its last hit. A count past its limit is the signal; nothing is refused by the count itself.
 * Off with the rate limits (`AUTH_RATE_LIMIT_ENABLE=false`): a deployment that counts nothing counts this neither.
 */
export const VELOCITY = {
  /** One address: a household or an office signs in a few times in ten minutes, a credential-stuffing run hundreds. */
  address: { limit: 20, intervalMs: 10 * 60_000 },
  /** One network: wide (a large ISP is one ASN), so only a flood counts, and it only raises the level to medium. */
  asn: { limit: 500, intervalMs: 10 * 60_000 },
} as const;

export interface Velocity {
  /** More sign-ins from this address than `VELOCITY.address` allows; null: not counted. */
  address: boolean | null;
  asn: boolean | null;
}

async function over(deps: Deps, key: string, rule: { limit: number; intervalMs: number }, at: number) {
  const namespace = deps.env.RATE_LIMITERS;
  const counter = namespace.get(namespace.idFromName(`RISK:${key}`));
  const result = await counter.hit(rule.limit, rule.intervalMs, at);
  return !result.allowed;
}

/** The counters a sign-in from the request's address and network goes to, with their rules. */
function countersOf(deps: Deps, asn: number | null): [string, { limit: number; intervalMs: number }][] {
  if (!deps.config.rateLimits.enabled) return [];
  // A loopback or private address is every local client's (`wrangler dev`, a proxy without `cf-connecting-ip`).
  const { address } = deps.visitor;
  const counted = address && !isNonPublicAddress(address) ? address : null;
  const counters: [string, { limit: number; intervalMs: number }][] = [];
  if (counted) counters.push([`ip:${addressKey(counted)}`, VELOCITY.address]);
  if (asn !== null) counters.push([`asn:${asn}`, VELOCITY.asn]);
  return counters;
}

/**
 * A count of this sign-in from the request's address and network, and how to take it back. A password sign-in counts
 * it beside the lockout's count, before the password is checked, and takes it back when the password was wrong (as
 * the lockout counts a failure first and forgives a right one): the count is never below the sign-ins that got past
 * their first factor, only above them by the wrong guesses in flight (src/auth/sign-in/early-reads.ts). A failing
 * object fails the sign-in (503) where the gate awaits it, as a limit does.
 */
export interface VelocityCount {
  velocity: Promise<Velocity>;
  takeBack(): Promise<void>;
}

export function countVelocity(deps: Deps, asn: number | null): VelocityCount {
  const at = deps.now();
  const counters = countersOf(deps, asn);
  const hits = counters.map(([key, rule]) => over(deps, key, rule, at));
  const velocity = Promise.all(hits).then((answers) => {
    const byKey = new Map(counters.map(([key], i) => [key.split(":")[0], answers[i]!] as const));
    return { address: byKey.get("ip") ?? null, asn: byKey.get("asn") ?? null };
  });
  return {
    velocity,
    async takeBack() {
      const namespace = deps.env.RATE_LIMITERS;
      await Promise.all(
        counters.map(async ([key, rule], i) => {
          // Only a hit that was made: a failed one counted nothing.
          if (
            !(await hits[i]!.then(
              () => true,
              () => false,
            ))
          )
            return;
          await namespace.get(namespace.idFromName(`RISK:${key}`)).unhit(rule.intervalMs, at);
        }),
      );
    },
  };
}
