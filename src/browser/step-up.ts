import type { Config } from "../config";
import {
  type Acr,
  acrOf,
  amrOf,
  floorOf,
  knownAcrValues,
  LEVEL,
  type Level,
  levelOf,
  levelOfAcr,
  type MethodTimes,
  methodsOf,
  type SignIn,
  type SignInMethod,
} from "./acr";

/**
 * Step-up (contract §12): what a request asks of the sign-in behind it, whether a session meets it, and what the
 * page can offer to meet it. One mechanism for the authorization requests here, the elevated claim (§6) and the
 * account center (§13): each states a demand (a level, and how recent), and the re-authentication step of the page
 * (src/pages/reauth-*.ts) raises the browser session until it meets the demand.
 */

/** What a sign-in must be: at least `level` (default: any sign-in), from methods performed at `notBefore` or later. */
export interface AuthDemand {
  level?: Level;
  /** The known `acr_values` asked, in the request's order of preference: the one the sign-in is reported as. */
  asked?: Acr[];
  /** ms; methods performed before this do not count (`max_age`, `prompt=login`). */
  notBefore?: number;
}

/** What an authorization request asks of the sign-in behind it (an OAuth2 pending request has these fields). */
export interface DemandingRequest {
  readonly prompt: readonly string[];
  readonly maxAge?: number;
  readonly acrValues?: string[];
  /** ms */
  readonly createdAt: number;
}

/**
 * The demand of an authorization request: `acr_values` (reaching one of the known values, so the weakest is the
 * floor: acr.ts `floorOf`), `max_age`, `prompt=login`.
 */
export function demandOf(request: DemandingRequest, now: number): AuthDemand {
  const limits = [
    // `max_age` (OIDC Core §3.1.2.1); a method performed for this very request counts however the seconds ran since,
    // or `max_age=0` (and a slow page with a small one) would ask again forever.
    ...(request.maxAge !== undefined ? [Math.min(now - request.maxAge * 1000, request.createdAt)] : []),
    // `prompt=login` asks for a sign-in made for this very request (OIDC Core §3.1.2.1).
    ...(request.prompt.includes("login") ? [request.createdAt] : []),
  ];
  const asked = knownAcrValues(request.acrValues ?? []);
  return {
    level: floorOf(asked),
    ...(asked.length ? { asked } : {}),
    ...(limits.length ? { notBefore: Math.max(...limits) } : {}),
  };
}

/**
 * Contract §6 and §12 agree on what a recent phishing-resistant sign-in is: a WebAuthn assertion by one of the user's
 * own keys, no older than one access-token lifetime (`AUTH_ACCESS_TOKEN_EXPIRES_IN`), which is what an elevated token
 * (`x-hasura-auth-elevated`, src/auth/webauthn/elevation.ts) stands for. oauth2/interaction.ts reads an elevated bearer
 * as such a sign-in; the account center asks for this demand before its sensitive steps.
 */
export const recentPhishingResistant = (config: Config, now: number): AuthDemand => ({
  level: LEVEL.phr,
  notBefore: now - config.tokens.accessTtl * 1000,
});

/** The methods of a session that count for a demand: those recent enough. */
export function countedMethods(times: MethodTimes, demand: AuthDemand): SignInMethod[] {
  const since = demand.notBefore ?? Number.NEGATIVE_INFINITY;
  return methodsOf(times).filter((method) => (times[method] ?? 0) >= since);
}

/**
 * `met`; `stale`: nothing recent enough signs the person in (a sign-in is needed, or `login_required`); `weak`: a
 * recent sign-in, below the level asked (a step-up, or `interaction_required`).
 */
export type Verdict = "met" | "stale" | "weak";

export function judge(times: MethodTimes, demand: AuthDemand): Verdict {
  const level = levelOf(countedMethods(times, demand));
  if (level === undefined) return "stale";
  return level >= (demand.level ?? LEVEL.pwd) ? "met" : "weak";
}

/**
 * The sign-in a code or device approval carries, for a session that meets the demand: `auth_time` the latest counted
 * method, `amr` the counted methods, `acr` the first value asked (in the request's order of preference) that the
 * sign-in reaches (OIDC Core §3.1.2.1 and §5.5.1.1: the class the authentication satisfied, one of those asked), else
 * the level reached.
 */
export function signInFor(times: MethodTimes, demand: AuthDemand, sid: string | null): SignIn {
  const counted = countedMethods(times, demand);
  const level = levelOf(counted) ?? LEVEL.pwd;
  const amr = amrOf(counted);
  const satisfied = demand.asked?.find((value) => levelOfAcr(value) <= level);
  return {
    authTime: Math.max(...counted.map((method) => times[method] ?? 0)),
    acr: satisfied ?? acrOf(level),
    ...(amr.length ? { amr } : {}),
    sid,
  };
}

/** The ways the page re-authenticates a signed-in person, as far as their account and the deployment allow. */
export type StepUpMethod = "passkey" | "password" | "totp";

export type Abilities = Record<StepUpMethod, boolean>;

const ORDER: StepUpMethod[] = ["passkey", "password", "totp"];

/**
 * What the page offers to meet the demand: each method the person has that moves the session toward it, when the
 * demand can be met at all with what they have. Without a recent first factor, a TOTP code is not offered (it signs
 * nobody in on its own); only a passkey reaches `phr`. Empty: this person cannot meet the demand here.
 */
export function stepUpMethods(times: MethodTimes, demand: AuthDemand, abilities: Abilities): StepUpMethod[] {
  const target = demand.level ?? LEVEL.pwd;
  const counted = countedMethods(times, demand);
  const able = ORDER.filter((method) => abilities[method] && !counted.includes(method));
  const reaches = (methods: SignInMethod[]) => (levelOf(methods) ?? -1) >= target;
  if (!reaches([...counted, ...able])) return [];
  const before = levelOf(counted) ?? -1;
  return able.filter((method) => {
    if (target === LEVEL.phr && method !== "passkey") return false;
    const after = levelOf([...counted, method]) ?? -1;
    return after > before && reaches([...counted, ...able]);
  });
}
