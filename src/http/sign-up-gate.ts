import { createMiddleware } from "hono/factory";
import { refuseOverLimit } from "../rate-limits/buckets";
import { addressKey } from "../rate-limits/client-address";
import type { TurnstileEndpoint } from "../settings/turnstile";
import type { AppEnv } from "./app-env";
import { documentedHeader } from "./documented";
import { type GateDeps, passChallenge, turnstileHeaderDoc } from "./turnstile";

/**
 * The sign-up checks (contract §9 and §11): Turnstile's `signup` challenge, when the deployment guards it, and the
 * `SIGNUPS` rate limit per client address. They apply to every request that can create a user, whatever its route:
 * the sign-up routes, anonymous sign-in, deanonymize, and every magic-link, email-code and SMS-code send while those
 * may create users — on every such send, known address or not, so that neither a missing challenge nor a 429 tells
 * which addresses have accounts. The built-in page's forms meet the same checks.
 *
 * The one place that creates a user (src/auth/new-users.ts) asks `admitSignUp` again before writing, so a route that
 * forgot the middleware fails closed instead of opening a way in. What a request has passed is kept on it
 * (`Deps.visitor`, visitor.ts): one solved challenge serves the whole request (Turnstile tokens are single use, so
 * a route also guarded under its own name, `passwordless` say, verifies its token once), and it counts once.
 */

/** Counts this request once in the `SIGNUPS` bucket for its client address (contract §11). */
export async function countSignUp(deps: GateDeps): Promise<void> {
  if (deps.visitor.countedSignUp) return;
  deps.visitor.countedSignUp = true;
  await refuseOverLimit(
    deps.env,
    deps.config.rateLimits,
    "SIGNUPS",
    { address: addressKey(deps.visitor.address ?? "unknown") },
    deps.now(),
  );
}

/**
 * The sign-up checks for this request: counted first (no outbound call for a flood), then the `signup` challenge,
 * which a token solved for `also` (the route's own guarded name) satisfies as well.
 */
export async function admitSignUp(
  deps: GateDeps,
  also?: TurnstileEndpoint,
  token?: string | null,
): Promise<void> {
  await countSignUp(deps);
  await passChallenge(deps, also ? ["signup", also] : ["signup"], token);
}

/**
 * The checks of a request that can create a user (`also`: its own guarded name; `token`: a page form's). While
 * sign-ups are off it creates nobody, and only `also` applies.
 */
export async function passSignUpChecks(
  deps: GateDeps,
  also?: TurnstileEndpoint,
  token?: string | null,
): Promise<void> {
  if (!deps.config.signUp.disabled) await admitSignUp(deps, also, token);
  else if (also) await passChallenge(deps, [also], token);
}

/**
 * The sign-up checks on a route that can create a user, before its work. `also` names the route's own guarded
 * endpoint (`passwordless` for the sends): while sign-ups are off the route creates nobody and only that one applies.
 */
export function signUpChecks(also?: TurnstileEndpoint) {
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    await passSignUpChecks(c.var.deps, also);
    return next();
  });
  return documentedHeader(middleware, turnstileHeaderDoc(also ?? "signup", also ? "signup" : undefined));
}
