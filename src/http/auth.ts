import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { actorOfToken } from "../audit/actor";
import { AppError } from "../errors";
import { DPoPProofError, dpopTargets, type VerifiedDPoPProof, verifyDPoPProof } from "../replay/dpop-proof";
import type { AccessTokenPayload } from "../signing-keys/jwt";
import type { AppEnv } from "./app-env";
import { actorOf, refuseWhileImpersonating } from "./impersonation";
import { importedSystemOf, importedTokenRefusal, verifyUserAccessToken } from "./imported-tokens";

/**
 * The service's own APIs (auth and storage) take a session access token as `Bearer` (RFC 6750, what nhost-js sends)
 * or, when the session is bound to a DPoP key (`cnf.jkt`, docs/oauth2.md §10.2), as `DPoP` with a proof by that key
 * (RFC 9449 §7). Schemes are case-insensitive (RFC 9110 §11.1).
 */
type Presented = { scheme: "Bearer" | "DPoP"; token: string } | null;

/** The `Authorization` header's access token and scheme, for every API that takes one (the OAuth2 userinfo too). */
export function presented(header: string | undefined): Presented {
  const match = header ? /^(Bearer|DPoP)\s+(\S+)$/i.exec(header) : null;
  if (!match) return null;
  return { scheme: match[1]!.toLowerCase() === "dpop" ? "DPoP" : "Bearer", token: match[2]! };
}

/** Why a request's token was not accepted: what `requireAuth` says in its 401. */
type Refusal = { refused: string };

/** Each request's proof is checked once (its `jti` is spent by the check): the outcome is kept for the request. */
const proofs = new WeakMap<Request, Promise<VerifiedDPoPProof | null>>();

/**
 * The request's DPoP proof, checked as RFC 9449 §4.3 lists (src/replay/dpop-proof.ts): over this request's method and
 * URL (as sent, or under the public URL of the API it reached), with `ath` of the access token when one comes with
 * the DPoP scheme, its `jti` used once. Null without a `DPoP` header; throws `DPoPProofError` for a bad proof.
 * Called by the access-token check below and by a sign-in or a refresh that binds its session to the key.
 * No server nonce is asked here: the session API has no round trip in which to hand one out before a sign-in.
 */
export function requestDPoPProof(c: Context<AppEnv>): Promise<VerifiedDPoPProof | null> {
  const known = proofs.get(c.req.raw);
  if (known) return known;
  const { config, deps } = c.var;
  const token = presented(c.req.header("authorization"));
  const urls = new Set([
    ...dpopTargets(c.req.url, config.urls.server, config.urls.authPrefix),
    ...dpopTargets(
      c.req.url,
      `${config.urls.storage.replace(/\/$/, "")}${config.urls.storagePrefix}`,
      config.urls.storagePrefix,
    ),
  ]);
  const checked = verifyDPoPProof(deps, {
    header: c.req.header("dpop"),
    method: c.req.method,
    urls: [...urls],
    accessToken: token?.scheme === "DPoP" ? token.token : undefined,
  });
  proofs.set(c.req.raw, checked);
  return checked;
}

/** What a token check needs of a request, whichever door it came in by (an API route, the service binding). */
export interface PresentedRequest {
  /** The `Authorization` header. */
  authorization: string | undefined | null;
  /** The request's DPoP proof, checked over this request and this token (RFC 9449 §4.3); null without a `DPoP` header. */
  proof: (accessToken: string) => Promise<VerifiedDPoPProof | null>;
}

/** A token's payload as a token check needs it: whom, and the DPoP key it is bound to. */
type BoundPayload = { sub: string; cnf?: { jkt: string } };

/**
 * The access token a request presents, with its sender checked (RFC 9449 §7.1): a token bound to a key (`cnf.jkt`)
 * only as `DPoP`, with a proof by that key over this request and this token; a bound token sent as `Bearer` is
 * refused (a thief who has the token has no key); an unbound token only as `Bearer` (the DPoP scheme asks for a
 * binding it does not have). `verify` says whose tokens are accepted: the API's routes take the Nhost face's (and an
 * old system's), the service binding either face's. The one check of both (src/platform/ calls it too).
 */
export async function checkPresentedToken<Payload extends BoundPayload>(
  request: PresentedRequest,
  verify: (token: string) => Promise<Payload | null>,
): Promise<{ payload: Payload; token: string } | Refusal | null> {
  const sent = presented(request.authorization ?? undefined);
  if (!sent) return null;
  const payload = await verify(sent.token);
  if (!payload) return { refused: "missing or invalid access token" };
  const bound = payload.cnf?.jkt;
  if (!bound) {
    if (sent.scheme === "DPoP") return { refused: "this access token is not DPoP-bound: send it as Bearer" };
    return { payload, token: sent.token };
  }
  if (sent.scheme === "Bearer")
    return { refused: "this access token is DPoP-bound: send it as DPoP with a proof" };
  let proof: VerifiedDPoPProof | null;
  try {
    proof = await request.proof(sent.token);
  } catch (error) {
    if (error instanceof DPoPProofError) return { refused: error.message };
    throw error;
  }
  if (!proof) return { refused: "a DPoP proof (the DPoP header) must come with this access token" };
  if (proof.jkt !== bound) return { refused: "the DPoP proof is not signed by the access token's key" };
  return { payload, token: sent.token };
}

/**
 * The session access token a request to the service's own API presents, its sender checked (`checkPresentedToken`).
 * Nothing changes for a request without DPoP: a Bearer token is checked as before.
 */
export async function presentedAccessToken(
  c: Context<AppEnv>,
): Promise<{ payload: AccessTokenPayload; token: string } | Refusal | null> {
  // `c.get`, not `c.var`: Hono builds `c.var` anew (an object of every variable) on each read.
  const deps = c.get("deps");
  const found = await checkPresentedToken(
    { authorization: c.req.header("authorization"), proof: () => requestDPoPProof(c) },
    (token) => verifyUserAccessToken(deps, token),
  );
  // The request's actor for the audit, in the one place every API's token is checked: its user, or the impersonator
  // its `act` claim names (src/audit/actor.ts).
  if (found && "payload" in found) deps.audit.actAs(actorOfToken(found.payload));
  return found;
}

/** Methods that read (RFC 9110 §9.2.1): the only ones an old system's token is let through on. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * An old system's access token reads only (contract supabase.md §6): on this service's own API it is refused, 403,
 * on every request that writes — a credential, an identifier, a factor, a provider link, an approval, an elevation —
 * and on a read that writes (`refuseImportedToken`, below). One rule here, not one per route: a route added later is
 * covered by its method. Storage is not behind this (it takes the token through `presentedAccessToken`, and an old
 * token may upload and delete files as its user).
 */
function readsOnly(c: Context<AppEnv>, payload: AccessTokenPayload): void {
  if (READS.has(c.req.method)) return;
  if (importedSystemOf(payload)) throw importedTokenRefusal();
  // An impersonation's token the same (contract operators.md §1): every write of this API is a credential, a factor,
  // a link, an approval, an org's role or connection, a token; refused here once, for each route behind this check.
  refuseWhileImpersonating(actorOf(payload), `${c.req.method} ${c.req.path}`);
}

/** Protected endpoints: a valid access token (held by its sender, above) or 401 `unauthorized`. */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const found = await presentedAccessToken(c);
  if (!found) throw new AppError("unauthorized");
  if ("refused" in found) throw new AppError("unauthorized", found.refused);
  readsOnly(c, found.payload);
  c.set("auth", found.payload);
  await next();
});

/**
 * Endpoints where a bearer is optional (`B?`). The client sends its token on every request, possibly expired, so an
 * invalid one (or one whose sender is not shown, above) is treated as absent; the handler decides whether it needed
 * one. An old system's token is refused as under `requireAuth` (a password change must not pass as "no bearer").
 */
export const optionalAuth = createMiddleware<AppEnv>(async (c, next) => {
  const found = await presentedAccessToken(c);
  const payload = found && "payload" in found ? found.payload : null;
  if (payload) readsOnly(c, payload);
  c.set("auth", payload);
  await next();
});

/**
 * `optionalAuth` for sign-out, where the refresh token is the credential: a client still holding an old system's
 * token in its header signs its session out all the same. The route refuses that token for `all` itself.
 */
export const signOutAuth = createMiddleware<AppEnv>(async (c, next) => {
  const found = await presentedAccessToken(c);
  c.set("auth", found && "payload" in found ? found.payload : null);
  await next();
});

/**
 * On a read that writes (a TOTP secret generated for enrollment): an old system's token is refused there too.
 * Mounted after `requireAuth`.
 */
export const refuseImportedToken = createMiddleware<AppEnv>(async (c, next) => {
  if (importedSystemOf(c.var.auth)) throw importedTokenRefusal();
  refuseWhileImpersonating(actorOf(c.var.auth), `${c.req.method} ${c.req.path}`);
  await next();
});

/**
 * The DPoP key a new or renewed session is bound to (docs/oauth2.md §10.2, "The service's own API"): the key of the
 * request's `DPoP` proof, when it has one. `sessionProof` (mounted on the routes that make or renew sessions,
 * src/auth/core-routes.ts) checks the proof first, so a bad one (400 `invalid-request`) is refused before the flow
 * spends or creates anything (a one-time code, an account, a refresh token), and leaves its key in
 * `c.var.sessionJkt`, where the route's sign-in scope takes it (src/auth/sign-in/scope.ts). A request without a
 * `DPoP` header is served exactly as before.
 */
export const sessionProof = createMiddleware<AppEnv>(async (c, next) => {
  c.set("sessionJkt", await proofKeyOf(c));
  await next();
});

/**
 * The thumbprint of the key the request's proof was signed with, or null without a proof. The proof covers this
 * request (`htm`, `htu`), is fresh and used once; with a DPoP-bound access token it also carries that token's `ath`
 * (an elevation). A bad proof is 400 `invalid-request`: the client is told its proof failed, not that its
 * credentials did.
 */
async function proofKeyOf(c: Context<AppEnv>): Promise<string | null> {
  if (c.req.header("dpop") === undefined) return null;
  try {
    return (await requestDPoPProof(c))?.jkt ?? null;
  } catch (error) {
    if (error instanceof DPoPProofError) throw new AppError("invalid-request", `DPoP: ${error.message}`);
    throw error;
  }
}
