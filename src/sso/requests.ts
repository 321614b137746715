import { and, eq, getTableColumns, gt, isNull, type SQL, sql } from "drizzle-orm";
import { ssoRequests } from "../db/schema";
import type { Deps } from "../http/deps";
import { decrypt, encrypt, sha256Hex } from "../lib/crypto";
import { randomToken } from "./random";

/**
 * Enterprise sign-ins under way (contract organizations.md §2), one row of `sso_requests` each: written by
 * `POST /sso/start`, consumed exactly once by a single conditional statement (`DELETE … RETURNING`, or for SAML a
 * conditional `UPDATE` then a `DELETE … RETURNING`), never read-then-write. The key is the SHA-256 of the value the
 * IdP echoes back (the OIDC `state`, or the SAML AuthnRequest's `ID` that `InResponseTo` names), so a database read
 * gives nothing to replay.
 *
 * The SAML engineer's side (src/sso/saml/) uses: `saveSsoRequest` at start (no verifier, no nonce), `keepResult` at
 * the ACS, `takeResult` at the ACS's own GET, then `finishSsoSignIn` (./finish.ts). IdP-initiated responses (no
 * `InResponseTo`, only for connections that allow it) use `keepUnsolicitedResult` instead of `keepResult`.
 */

export const SSO_REQUEST_LIFETIME_MS = 10 * 60 * 1000;

/**
 * What a connection asserted about the person, once verified (the OIDC ID token's claims, the SAML assertion's
 * NameID and attributes). `email` is checked against the org's verified domains by `finishSsoSignIn`.
 */
export interface SsoIdentity {
  /** The IdP's stable id of the person (OIDC `sub`, SAML NameID). */
  subject: string;
  email: string;
  /** OIDC `email_verified`; `false` refuses the sign-in, absent trusts the org's own IdP inside its domains. */
  emailVerified?: boolean;
  displayName?: string;
  /** Group names or ids, matched against the connection's `roleMapping`. */
  groups?: string[];
}

/** A pending sign-in as `takeSsoRequest` / `takeResult` give it back. */
export interface PendingSsoRequest {
  connectionId: string;
  /** Already checked against the allow-list at start. */
  redirectTo: string;
  /** SHA-256 of the starting browser's binding value; `IDP_INITIATED` for an unsolicited SAML response. */
  browserHash: string;
  /** OIDC: the PKCE verifier, unsealed. */
  codeVerifier?: string;
  /** OIDC: the nonce the ID token must carry. */
  nonce?: string;
  /** A face's code flow (`startSsoSignIn`'s `CodeReturn`): the end is a code bound to it, not a session. */
  codeChallenge?: string;
  /** A "test the connection" round trip (./test-round-trip.ts): it records the outcome, signs nobody in. */
  test?: boolean;
}

/**
 * A face's code flow keeps its challenge in `redirect_to` as JSON `{returnTo, codeChallenge}`, beside the target: no
 * URL begins with `{`, so every other row reads as before (and a ten-minute row needs no migration).
 */
function storedTarget(redirectTo: string, codeChallenge: string | undefined): string {
  return codeChallenge ? JSON.stringify({ returnTo: redirectTo, codeChallenge }) : redirectTo;
}

function targetOf(stored: string): { redirectTo: string; codeChallenge?: string } {
  if (!stored.startsWith("{")) return { redirectTo: stored };
  const { returnTo, codeChallenge } = JSON.parse(stored) as { returnTo: string; codeChallenge: string };
  return { redirectTo: returnTo, codeChallenge };
}

/**
 * The `browserHash` of a pending sign-in that no browser started (a SAML IdP-initiated response): nothing to bind to,
 * so `finishSsoSignIn` accepts it only when the connection allows IdP-initiated sign-ins. No SHA-256 hex looks so.
 */
export const IDP_INITIATED = "idp-initiated";

export interface NewSsoRequest {
  connectionId: string;
  /** The OIDC `state` or the SAML AuthnRequest `ID`, as sent to the IdP; stored as its SHA-256. */
  state: string;
  redirectTo: string;
  /** From `bindBrowser(c, "sso-flow", SSO_REQUEST_LIFETIME_MS / 1000)`. */
  browserHash: string;
  /** OIDC: sealed at rest (AES-GCM under AUTH_ENCRYPTION_KEY). */
  codeVerifier?: string;
  nonce?: string;
  codeChallenge?: string;
  test?: boolean;
}

export async function saveSsoRequest(deps: Deps, request: NewSsoRequest): Promise<void> {
  await deps.db.insert(ssoRequests).values({
    stateHash: await sha256Hex(request.state),
    connectionId: request.connectionId,
    codeVerifierSealed: request.codeVerifier
      ? await encrypt(deps.config.secrets.encryptionKey, request.codeVerifier)
      : null,
    nonce: request.nonce ?? null,
    redirectTo: storedTarget(request.redirectTo, request.codeChallenge),
    browserHash: request.browserHash,
    test: request.test ?? false,
    expiresAt: deps.now() + SSO_REQUEST_LIFETIME_MS,
  });
}

type Row = typeof ssoRequests.$inferSelect;

async function pendingOf(deps: Deps, row: Row): Promise<PendingSsoRequest> {
  return {
    connectionId: row.connectionId,
    ...targetOf(row.redirectTo),
    browserHash: row.browserHash,
    ...(row.codeVerifierSealed
      ? { codeVerifier: await decrypt(deps.config.secrets.encryptionKey, row.codeVerifierSealed) }
      : {}),
    ...(row.nonce ? { nonce: row.nonce } : {}),
    ...(row.test ? { test: true } : {}),
  };
}

/**
 * OIDC callback: the pending request of `state` for `connectionId`, taken once (of two callbacks with one state, one
 * finds it) and only by the browser that started it (`browserHash`, from `browserBinding(c, "sso-flow")`): a callback
 * URL opened in another browser finds nothing and consumes nothing. Unknown, expired or used: `undefined`.
 */
export async function takeSsoRequest(
  deps: Deps,
  connectionId: string,
  state: string | undefined,
  browserHash: string | null,
): Promise<PendingSsoRequest | undefined> {
  if (!state || state.length > 512 || !browserHash) return undefined;
  const row = await deps.db
    .delete(ssoRequests)
    .where(
      and(
        eq(ssoRequests.stateHash, await sha256Hex(state)),
        eq(ssoRequests.connectionId, connectionId),
        eq(ssoRequests.browserHash, browserHash),
        isNull(ssoRequests.resultHash),
        gt(ssoRequests.expiresAt, deps.now()),
      ),
    )
    .returning()
    .get();
  return row && pendingOf(deps, row);
}

/**
 * SAML ACS (a cross-site POST that carries no SameSite=Lax cookie): keeps the verified identity on the pending
 * request that `inResponseTo` names, for this connection, and gives a fresh one-time id for the browser's bounce to
 * a GET of the service's own (where the binding cookie is readable). One conditional UPDATE: an `InResponseTo` is
 * accepted once; unknown, expired, another connection's or already answered → it changes nothing. Given back as a
 * statement, not run, so that the ACS runs it in one batch with the assertion ID's insert (`unless`: a condition the
 * update also needs, there that the ID was never seen); undefined when `inResponseTo` cannot name a request.
 */
export async function keepResult(
  deps: Deps,
  connectionId: string,
  inResponseTo: string,
  identity: SsoIdentity,
  /** A connection not enabled yet answers only its test round trips. */
  testOnly = false,
  also?: SQL,
) {
  if (!inResponseTo || inResponseTo.length > 512) return undefined;
  const oneTimeId = randomToken();
  const statement = deps.db
    .update(ssoRequests)
    .set({ result: { ...identity }, resultHash: await sha256Hex(oneTimeId) })
    .where(
      and(
        eq(ssoRequests.stateHash, await sha256Hex(inResponseTo)),
        eq(ssoRequests.connectionId, connectionId),
        isNull(ssoRequests.resultHash),
        gt(ssoRequests.expiresAt, deps.now()),
        ...(testOnly ? [eq(ssoRequests.test, true)] : []),
        ...(also ? [also] : []),
      ),
    )
    .returning({ stateHash: ssoRequests.stateHash });
  return { statement, oneTimeId };
}

/**
 * SAML IdP-initiated response (only when the connection allows it: the caller checks, and `finishSsoSignIn` checks
 * again): no request to answer, so one is written already holding its result, bound to no browser.
 */
export async function keepUnsolicitedResult(
  deps: Deps,
  connectionId: string,
  redirectTo: string,
  identity: SsoIdentity,
): Promise<string> {
  const oneTimeId = randomToken();
  await deps.db.insert(ssoRequests).values({
    stateHash: await sha256Hex(`unsolicited:${randomToken()}`),
    connectionId,
    redirectTo,
    browserHash: IDP_INITIATED,
    result: { ...identity },
    resultHash: await sha256Hex(oneTimeId),
    expiresAt: deps.now() + SSO_REQUEST_LIFETIME_MS,
  });
  return oneTimeId;
}

/**
 * The ACS's GET: the kept identity and its request, once (`DELETE … RETURNING`). The browser binding is checked by
 * `finishSsoSignIn`, which must be called next. Unknown, expired or used one-time id → `undefined`.
 *
 * With `userHint` (one shard: the home database holds every user), the same statement also answers the id of the
 * user whose email the identity asserts, if any (`userHint`), so that the sign-in reads that user's row, membership,
 * factors and device side by side in the next trip instead of one after another (issue 48, "Round trips";
 * ./jit.ts). A hint only: it is used only after the browser binding and the connection were checked, and only the
 * row that still holds the email (read by id AND email) is taken; a hint that finds none is read again by email.
 */
export async function takeResult(
  deps: Deps,
  oneTimeId: string | undefined,
  { userHint = false }: { userHint?: boolean } = {},
): Promise<{ request: PendingSsoRequest; identity: SsoIdentity; userHint?: string } | undefined> {
  if (!oneTimeId || oneTimeId.length > 512) return undefined;
  const taken = deps.db
    .delete(ssoRequests)
    .where(
      and(eq(ssoRequests.resultHash, await sha256Hex(oneTimeId)), gt(ssoRequests.expiresAt, deps.now())),
    );
  const row = userHint
    ? await taken.returning({ ...getTableColumns(ssoRequests), userHint: USER_OF_RESULT }).get()
    : await taken.returning().get();
  if (!row?.result) return undefined;
  const hint = "userHint" in row && typeof row.userHint === "string" ? row.userHint : undefined;
  return {
    request: await pendingOf(deps, row),
    identity: row.result as unknown as SsoIdentity,
    ...(hint ? { userHint: hint } : {}),
  };
}

/**
 * The id of the user of the taken row's asserted email, trimmed and lower-cased as ./jit.ts does (in SQL only ASCII
 * is lower-cased: an address that differs finds no row, and the sign-in reads by email as before). `users.email` is
 * unique and indexed.
 */
const USER_OF_RESULT = sql<
  string | null
>`(SELECT "id" FROM "users" WHERE "email" = lower(trim(json_extract("sso_requests"."result", '$.email'))))`;
