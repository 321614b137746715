import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { accountKey } from "./account-key";
import { type RateLimitBucket, refuseOverLimit } from "./buckets";
import { addressKey } from "./client-address";

async function bodyField(c: Context<AppEnv>, field: string): Promise<string | undefined> {
  try {
    const value = ((await c.req.json()) as Record<string, unknown>)[field];
    return typeof value === "string" && value.length <= 254 ? value : undefined;
  } catch {
    return undefined; // Malformed bodies are the validator's business; the IP limit still applies.
  }
}

/**
 * Counts the request in `bucket` (contract §11) per client address and, with `identifierField`, per the account the
 * body names (an email, a phone number), so one account cannot be hammered from many addresses. The address count
 * goes to the bucket's Rate Limiting binding when the deployment has one (rate-limits/buckets.ts), the account count to its
 * exact `RateLimiter` object. Runs before any expensive work.
 */
export function rateLimit(bucket: RateLimitBucket, identifierField?: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    // `c.get`, not `c.var`: Hono builds `c.var` anew (an object of every variable) on each read, on every request here.
    const { rateLimits } = c.get("config");
    if (!rateLimits.enabled) return next();
    await count(c, bucket, identifierField);
    await next();
  });
}

/** The body's fields that may name the account, in order: the first one present does (an email, or else a phone). */
type IdentifierFields = string | readonly string[];

async function count(
  c: Context<AppEnv>,
  bucket: RateLimitBucket,
  identifierFields?: IdentifierFields,
): Promise<void> {
  let account: string | undefined;
  for (const field of typeof identifierFields === "string" ? [identifierFields] : (identifierFields ?? [])) {
    const identifier = await bodyField(c, field);
    if (identifier) {
      account = accountKey(field, identifier);
      break;
    }
  }
  await countFor(c, bucket, account);
}

function countFor(c: Context<AppEnv>, bucket: RateLimitBucket, account: string | undefined): Promise<void> {
  return refuseOverLimit(
    c.env,
    c.get("config").rateLimits,
    bucket,
    { address: addressKey(c.req.header("cf-connecting-ip") ?? "unknown"), account },
    c.get("deps").now(),
  );
}

/** What a route whose body decides its work counts: the bucket, and the body's field naming the account. */
export type BodyLimit = { bucket: RateLimitBucket; field?: string } | null;

/**
 * `rateLimit` for a route whose body decides what it sends or checks (GoTrue's `/otp`, `/verify`, `/resend`,
 * `/signup`): `choose` reads the body as the handler will and names the bucket, and the field of the account the
 * handler will mail, text or check; null counts nothing here. The account must be the one the handler uses: keyed by
 * another field the body also carries, a request would count against a made-up number while the handler mails the
 * address it names, and the address's own limit would never be reached (the threat in
 * test/faces/supabase/body-limits.test.ts). A body that is not JSON is the validator's to refuse; its address counts.
 */
export function rateLimitByBody(
  bucketOfJunk: RateLimitBucket,
  choose: (body: Record<string, unknown>) => BodyLimit,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!c.get("config").rateLimits.enabled) return next();
    const body = await c.req.json().then(
      (parsed: unknown) =>
        parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : null,
      () => null,
    );
    const limit = body ? choose(body) : { bucket: bucketOfJunk };
    // The chosen field read and keyed as every route's limit reads its one field.
    if (limit) await count(c, limit.bucket, limit.field);
    await next();
  });
}

/**
 * Counts a send inside a handler, once it knows the send will happen (GoTrue's `PUT /user` mails a changed address,
 * texts a changed number): the client address and the account `value` names (`field` says how it is written), as the
 * Nhost API's routes for the same sends count them before their handler.
 */
export async function rateLimitSend(
  c: Context<AppEnv>,
  bucket: RateLimitBucket,
  field: string,
  value: string,
): Promise<void> {
  if (!c.get("config").rateLimits.enabled) return;
  await countFor(c, bucket, accountKey(field, value));
}

/**
 * `rateLimit` for a password sign-in (issue 48, "Round trips"): the count runs BESIDE the handler's first reads
 * instead of before the handler. The handler's flow awaits it (`c.var.pendingCount`, the sign-in scope's `counted`)
 * before anything it writes and before the password is looked at (accounts/sign-in.ts, phone-password.ts), so a
 * refused or uncountable request has read, and done, nothing more; a Turnstile challenge on the route is verified only
 * once it has counted (src/http/turnstile.ts). Awaited here again after the handler: a route whose flow did not await
 * it still answers its refusal.
 */
export function rateLimitBeside(bucket: RateLimitBucket, identifierField: IdentifierFields) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!c.get("config").rateLimits.enabled) return next();
    const counted = count(c, bucket, identifierField);
    // Awaited by the flow and below; until then a refusal must not surface as an unhandled rejection.
    counted.catch(() => {});
    c.set("pendingCount", counted);
    await next();
    // The refusal answers, whatever ran beside it (a body the validator refused: 429 before 400, as before); unless
    // the flow awaited it and answered it already.
    const refusal = await counted.then(
      () => undefined,
      (error: unknown) => error,
    );
    if (refusal !== undefined && c.error !== refusal) throw refusal;
  });
}
