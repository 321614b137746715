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

async function over(deps: Deps, key: string, rule: { limit: number; intervalMs: number }): Promise<boolean> {
  const namespace = deps.env.RATE_LIMITERS;
  const counter = namespace.get(namespace.idFromName(`RISK:${key}`));
  const result = await counter.hit(rule.limit, rule.intervalMs, deps.now());
  return !result.allowed;
}

/** Counts this sign-in from the request's address and network; a failing object fails the sign-in (503), as a limit does. */
export async function countVelocity(deps: Deps, asn: number | null): Promise<Velocity> {
  // A loopback or private address is every local client's (`wrangler dev`, a proxy without `cf-connecting-ip`).
  const { address } = deps.visitor;
  const counted = address && !isNonPublicAddress(address) ? address : null;
  if (!deps.config.rateLimits.enabled) return { address: null, asn: null };
  const [byAddress, byAsn] = await Promise.all([
    counted ? over(deps, `ip:${addressKey(counted)}`, VELOCITY.address) : null,
    asn !== null ? over(deps, `asn:${asn}`, VELOCITY.asn) : null,
  ]);
  return { address: byAddress, asn: byAsn };
}
