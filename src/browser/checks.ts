import type { AppError } from "../errors";
import { passSignUpChecks as passPageSignUpChecks } from "../http/sign-up-gate";
import { passChallenge } from "../http/turnstile";
import { accountKey } from "../rate-limits/account-key";
import { countRequest, type RateLimitBucket } from "../rate-limits/buckets";
import { addressKey } from "../rate-limits/client-address";
import type { TurnstileEndpoint } from "../settings/turnstile";
import type { Ctx } from "./page-paths";
import type { PageText } from "./page-text";

/** The checks the page's forms share with the API they stand for: rate limits and Turnstile. */

/** The page's forms count against the same buckets as the API they stand for (contract §11). */
export async function rateLimited(c: Ctx, bucket: RateLimitBucket, email: string): Promise<number | null> {
  const deps = c.var.deps;
  const refusal = await countRequest(
    c.env,
    deps.config.rateLimits,
    bucket,
    {
      address: addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
      account: accountKey("email", email),
    },
    deps.now(),
  );
  return refusal?.retryAfterSeconds ?? null;
}

/**
 * Turnstile on a page form, when the deployment guards its endpoint: the widget puts its token in the form as
 * `cf-turnstile-response`. Without a site key the page has no widget to show, and the form fails closed like the
 * API (the operator sees why in the log).
 */
export async function passTurnstile(c: Ctx, endpoint: TurnstileEndpoint, params: Map<string, string>) {
  warnWithoutSiteKey(c, [endpoint]);
  await passChallenge(c.var.deps, [endpoint], formToken(params));
}

/**
 * The sign-up checks (src/http/sign-up-gate.ts) on a page form that can create a user: the page's sign-up, and its
 * magic-link form while sign-ups are on (`also`: `passwordless`, so one widget token serves both names). While sign-ups
 * are off the magic-link form creates nobody, and only `also` applies.
 */
export async function passSignUpChecks(c: Ctx, params: Map<string, string>, also?: TurnstileEndpoint) {
  warnWithoutSiteKey(c, also ? ["signup", also] : ["signup"]);
  await passPageSignUpChecks(c.var.deps, also, formToken(params));
}

const formToken = (params: Map<string, string>) => (params.get("cf-turnstile-response") ?? "").trim() || null;

function warnWithoutSiteKey(c: Ctx, endpoints: TurnstileEndpoint[]) {
  const settings = c.var.config.turnstile;
  const guarded = endpoints.find((endpoint) => settings?.endpoints.has(endpoint));
  if (guarded && !settings?.siteKey)
    console.warn(`turnstile: the OAuth2 page guards ${guarded} but AUTH_TURNSTILE_SITE_KEY is unset`);
}

/** A Turnstile refusal in the page's words; undefined for any other error. */
export function turnstileMessage(t: PageText, error: AppError): string | undefined {
  if (error.code === "turnstile-unavailable") return t.errors.turnstileUnavailable;
  if (error.code === "turnstile-required" || error.code === "turnstile-failed") return t.errors.turnstile;
  return undefined;
}
