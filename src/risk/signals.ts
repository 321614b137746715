import {
  countEarly,
  earlyReader,
  type KnownBy,
  knownDeviceOf,
  parseRecentPlaces,
  readEarly,
  type SessionGateReads,
  type SignInScope,
} from "../auth";
import type { UserRow } from "../db/schema";
import { isDisposableEmail } from "./disposable";
import { type Travel, travelFrom } from "./travel";
import { addressVelocity, countVelocity, type Velocity } from "./velocity";

/**
 * What a sign-in's risk is judged from, all of it what the platform and our own records already hold: `request.cf`
 * (set by Cloudflare, never by the client), the device (its cookie, else its browser and network, as the new-device
 * notice knows it), the account's last sign-in places, the address's and network's velocity, the account's mail
 * domain. The same object goes to the audit and to the app's hook; no coordinates in it (the city says enough).
 */
export interface Signals {
  country: string | null;
  asn: number | null;
  city: string | null;
  /** Bot Management's score (1 automated … 99 human), when the zone has it. */
  botScore: number | null;
  /** `cookie`: a browser that signed in before and kept our cookie; `network`: its browser and network only. */
  device: "cookie" | "network" | "new";
  /** A country none of the account's last sign-ins was from; null when none of them had one. */
  newCountry: boolean | null;
  travel: Travel | null;
  velocity: Velocity;
  disposableEmail: boolean;
}

const deviceOf = (known: KnownBy): Signals["device"] => known ?? "new";

/**
 * How the request's device is known to `userId`: one read of `user_devices`, started as soon as the account is known
 * (src/auth/sign-in/early-reads.ts), beside the lockout's count; the gate takes it after the first factor.
 */
const knownDevice = (scope: SignInScope, userId: string): Promise<KnownBy> =>
  readEarly(scope, `risk-device:${userId}`, () =>
    knownDeviceOf(scope.deps, userId, scope.userAgent, earlyReader(scope, userId)),
  );

/** The sign-in counted from the request's address and network (./velocity.ts), started early when the flow can. */
const velocityOf = (scope: SignInScope): Promise<Velocity> =>
  countEarly(scope, "risk-velocity", () => {
    const count = countVelocity(scope.deps, scope.deps.visitor.signals?.asn ?? null);
    return { answer: count.velocity, takeBack: count.takeBack };
  });

/** The gate's read and count, started early (the risk feature's `readsBeforeSession`). */
export const readSignalsEarly: SessionGateReads = (scope, userId) => {
  knownDevice(scope, userId);
  velocityOf(scope);
};

/**
 * The signals of the sign-in of `user` in `scope`: one read of `user_devices`, two counter calls (the address's on its
 * binding when bound), nothing written.
 */
export async function gatherSignals(scope: SignInScope, user: UserRow): Promise<Signals> {
  const { deps } = scope;
  const cf = deps.visitor.signals;
  const places = parseRecentPlaces(user.recentPlaces);
  const [known, velocity] = await Promise.all([
    knownDevice(scope, user.id),
    addressVelocity(deps, velocityOf(scope)),
  ]);
  const countries = places.flatMap((p) => (p.country ? [p.country] : []));
  return {
    country: cf?.country ?? null,
    asn: cf?.asn ?? null,
    city: cf?.city ?? null,
    botScore: cf?.botScore ?? null,
    device: deviceOf(known),
    newCountry: cf?.country && countries.length > 0 ? !countries.includes(cf.country) : null,
    travel: cf ? travelFrom(places, cf, deps.now()) : null,
    velocity,
    disposableEmail: isDisposableEmail(user.email),
  };
}
