import { UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { isNonPublicAddress } from "../http/visitor";
import { addressKey } from "../rate-limits/client-address";

/**
 * Velocity: how many sign-ins got past their first factor from one address, and from one network (ASN), lately.
 * Counted in the rate limits' own sliding-window objects (src/rate-limits/rate-limiter.ts, `RATE_LIMITERS`) under
 * keys of their own (`RISK:ip:…`, `RISK:asn:…`): no table, one object call each, and the object forgets a key two
 * windows after its last hit. A count past its limit is the signal; nothing is refused by the count itself.
 * Off with the rate limits (`AUTH_RATE_LIMIT_ENABLE=false`): a deployment that counts nothing counts this neither.
 * With a Rate Limiting binding `RISK_VELOCITY_LIMITER` (`[[ratelimits]]`, docs/risk.md §7) the address is counted
 * there instead (`addressVelocity`): no object per address; the network stays in its object.
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

/** The name of the address's Rate Limiting binding, when the deployment binds one (wrangler.toml, docs/risk.md). */
export const ADDRESS_VELOCITY_BINDING = "RISK_VELOCITY_LIMITER";

/** The binding, when bound: it is not in wrangler.toml by default (an operator's choice of window, docs/risk.md §7). */
function velocityBinding(deps: Deps): RateLimit | undefined {
  return (deps.env as unknown as Record<string, RateLimit | undefined>)[ADDRESS_VELOCITY_BINDING];
}

/** The request's address as counted (IPv6 per /64), or null: none, or a loopback or private one. */
function countedAddress(deps: Deps): string | null {
  if (!deps.config.rateLimits.enabled) return null;
  // A loopback or private address is every local client's (`wrangler dev`, a proxy without `cf-connecting-ip`).
  const { address } = deps.visitor;
  return address && !isNonPublicAddress(address) ? addressKey(address) : null;
}

/** The counters a sign-in from the request's address and network goes to, with their rules. */
function countersOf(deps: Deps, asn: number | null): [string, { limit: number; intervalMs: number }][] {
  if (!deps.config.rateLimits.enabled) return [];
  const counted = countedAddress(deps);
  const counters: [string, { limit: number; intervalMs: number }][] = [];
  // With the binding, the address is counted there, after the first factor (`addressVelocity`), not in an object.
  if (counted && !velocityBinding(deps)) counters.push([`ip:${counted}`, VELOCITY.address]);
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

/**
 * The address's velocity with the binding: one `limit` call, counted where the platform counts it, after the first
 * factor proved right (the gate's own step). A binding's count cannot be taken back, so it is not started with the
 * early reads: it needs no round trip (counted in the Cloudflare location that got the request), so counting late
 * costs the sign-in nothing, and a wrong password is never counted. Its window is the binding's (10 or 60 s) and
 * its limit the binding's own; counted per location, which an address does not spread over. `counted` (the object's
 * answer) is kept as it is without the binding, or where the address is not counted; a failing binding fails the
 * sign-in (503), as a failing object does.
 */
export async function addressVelocity(deps: Deps, counted: Promise<Velocity>): Promise<Velocity> {
  const binding = velocityBinding(deps);
  const address = binding ? countedAddress(deps) : null;
  if (!binding || !address) return counted;
  const [velocity, outcome] = await Promise.all([
    counted,
    binding.limit({ key: `ip:${address}` }).catch((error: unknown) => {
      throw new UnavailableError(`risk velocity: ${(error as Error)?.message ?? error}`);
    }),
  ]);
  return { ...velocity, address: !outcome.success };
}
