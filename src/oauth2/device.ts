import { generateRandomString, type RandomReader } from "@oslojs/crypto/random";
import { and, eq, gt, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import { base64url } from "jose";
import { type DeviceAuthorizationRow, deviceAuthorizations, type OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { toHex } from "../lib/hex";
import { type Claimed, onFaultPutBack, type PutBack, putBackWith } from "../lib/put-back";
import { DEVICE_PAGE_PATH } from "../lib/redirect";
import { hmacSubkey } from "../lib/subkeys";
import { authorizationDetailsError } from "./authorization-details";
import { keepFetchedClient } from "./clients";
import { OAuth2Error } from "./errors";
import { type OAuth2Params, param, scopeList } from "./params";
import { forgetPendingRequest, newRequestId, type PendingRequest } from "./pending-requests";
import { requestedResources } from "./resources";
import type { SignIn } from "./tokens";

/**
 * The device authorization grant (RFC 8628): a device or CLI without a browser gets a device code it keeps and a
 * user code it shows; the person enters the user code on the built-in page (`/oauth2/device`), signs in and
 * approves; meanwhile the device polls the token endpoint with its device code.
 */
export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
// The device page's path is the pages' (src/lib/redirect.ts, beside the login page's); the flow hands it to RFC 8628.
export { DEVICE_PAGE_PATH };

const LIFETIME_SECONDS = 600;
const INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5: a poll sooner than the interval gets `slow_down`, and the interval grows by five seconds. */
const SLOW_DOWN_SECONDS = 5;
/** RFC 8628 §6.1: consonants only (no words, no 0/O or 1/I look-alikes); 20^8 ≈ 2.6 × 10^10 codes. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

const random: RandomReader = { read: (bytes) => crypto.getRandomValues(bytes) };

/** A user code as people type it: any case, with or without the dash; null when it cannot be one. */
export function normalizeUserCode(value: string): string | null {
  const letters = value.toUpperCase().replace(/[\s-]/g, "");
  return letters.length === 8 && [...letters].every((c) => USER_CODE_ALPHABET.includes(c)) ? letters : null;
}

const shown = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** User codes are stored under an HMAC: a plain hash of 35 bits of entropy would be reversed by trying them all. */
async function userCodeHash(deps: Deps, code: string): Promise<string> {
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "device-user-codes");
  return toHex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(code)));
}

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** `POST /oauth2/device_authorization` (RFC 8628 §3.1) for an authenticated (or public) client. */
export async function startDeviceAuthorization(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
): Promise<DeviceAuthorizationResponse> {
  if (!client.grantTypes.includes(DEVICE_GRANT)) {
    throw new OAuth2Error("unauthorized_client", "this client may not use the device authorization grant");
  }
  const scopes = scopeList(param(params, "scope", 1000));
  const outside = scopes.filter((scope) => !client.scopes.includes(scope));
  if (outside.length > 0)
    throw new OAuth2Error("invalid_scope", `scope not allowed for this client: ${outside.join(" ")}`);
  const resources = requestedResources(deps.config, client, params.resources);
  // RFC 9396: this flow's page does not show authorization details, so none are taken rather than dropped unseen.
  if (params.get("authorization_details"))
    throw authorizationDetailsError("the device flow takes no authorization_details (docs/agents.md)");
  // The request is valid: a client read from its metadata document is stored now, and not before.
  await keepFetchedClient(deps, client);
  const deviceCode = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  const userCode = generateRandomString(random, USER_CODE_ALPHABET, 8);
  const now = deps.now();
  await deps.db.insert(deviceAuthorizations).values({
    deviceCodeHash: await sha256Hex(deviceCode),
    userCodeHash: await userCodeHash(deps, userCode),
    clientId: client.clientId,
    scopes,
    resources,
    status: "pending",
    intervalSeconds: INTERVAL_SECONDS,
    createdAt: now,
    expiresAt: now + LIFETIME_SECONDS * 1000,
  });
  const verificationUri = deps.config.urls.auth(DEVICE_PAGE_PATH);
  return {
    device_code: deviceCode,
    user_code: shown(userCode),
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${shown(userCode)}`,
    expires_in: LIFETIME_SECONDS,
    interval: INTERVAL_SECONDS,
  };
}

/** The pending, unexpired authorization a user code names (the page), or undefined. */
export async function pendingByUserCode(deps: Deps, userCode: string) {
  return deps.db
    .select()
    .from(deviceAuthorizations)
    .where(
      and(
        eq(deviceAuthorizations.userCodeHash, await userCodeHash(deps, userCode)),
        eq(deviceAuthorizations.status, "pending"),
        gt(deviceAuthorizations.expiresAt, deps.now()),
      ),
    )
    .get();
}

/** Who decided, and how: approved with their sign-in, or denied. */
export type PolledDecision = { approvedBy: { userId: string } & SignIn } | { deniedBy: string };

/**
 * The person's decision on the page; only a pending, unexpired authorization changes, and only by the person it asks
 * when it names one (a CIBA request's `subject`): one conditional UPDATE, so two tabs or two people cannot both decide.
 * The decided row, or undefined.
 */
export async function decideDevice(
  deps: Deps,
  deviceCodeHash: string,
  decision: PolledDecision,
): Promise<DeviceAuthorizationRow | undefined> {
  const decider = "deniedBy" in decision ? decision.deniedBy : decision.approvedBy.userId;
  const set =
    "deniedBy" in decision
      ? { status: "denied" as const }
      : {
          status: "approved" as const,
          userId: decision.approvedBy.userId,
          authTime: decision.approvedBy.authTime,
          acr: decision.approvedBy.acr ?? null,
          amr: decision.approvedBy.amr ?? null,
          sid: decision.approvedBy.sid ?? null,
        };
  return deps.db
    .update(deviceAuthorizations)
    .set(set)
    .where(
      and(
        eq(deviceAuthorizations.deviceCodeHash, deviceCodeHash),
        eq(deviceAuthorizations.status, "pending"),
        gt(deviceAuthorizations.expiresAt, deps.now()),
        or(isNull(deviceAuthorizations.subject), eq(deviceAuthorizations.subject, decider)),
      ),
    )
    .returning()
    .get();
}

/**
 * The page's request for a pending device authorization, once the person entered its user code: it goes through
 * sign-in and consent like any other, and its end is `finishDeviceRequest` instead of a code.
 */
export function deviceRequest(deps: Deps, row: DeviceAuthorizationRow, userCode: string): PendingRequest {
  return {
    ...polledRequest(deps, row),
    device: { codeHash: row.deviceCodeHash, userCode: shown(userCode) },
  };
}

/**
 * The page request of a row the client polls for (a device authorization, a CIBA request): no redirect, what the row
 * asks; the caller adds what says which kind it is and how it ends.
 */
export function polledRequest(deps: Deps, row: DeviceAuthorizationRow): PendingRequest {
  return {
    id: newRequestId(),
    clientId: row.clientId,
    redirectUri: "",
    scopes: row.scopes,
    resources: row.resources,
    prompt: [],
    uiLocales: [],
    createdAt: deps.now(),
  };
}

/**
 * Approves (for the signed-in person) or denies the device authorization (or CIBA request) behind a page request;
 * the decided row, or undefined when it was decided, or expired, meanwhile (two tabs, a late click), or is not the
 * person's to decide.
 */
export async function finishDeviceRequest(
  deps: Deps,
  request: Pick<PendingRequest, "id" | "clientId" | "scopes">,
  codeHash: string,
  decision: PolledDecision,
): Promise<DeviceAuthorizationRow | undefined> {
  const decided = await decideDevice(deps, codeHash, decision);
  deps.background(forgetPendingRequest(deps.env, request.id));
  if (decided && "approvedBy" in decision) {
    deps.audit({
      type: decided.kind === "ciba" ? "oauth2.ciba-approved" : "oauth2.device-approved",
      userId: decision.approvedBy.userId,
      detail: { clientId: request.clientId, scopes: request.scopes },
    });
  } else if (decided?.kind === "ciba") {
    deps.audit({
      type: "oauth2.ciba-denied",
      userId: decided.subject,
      detail: { clientId: request.clientId },
    });
  }
  return decided;
}

/** An approved authorization the poll claimed: its row as it was, how to put it back, how to spend it for good. */
export interface ClaimedApproval extends Claimed {
  row: DeviceAuthorizationRow & { userId: string; authTime: number };
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5). One UPDATE records the poll and
 * decides, from the previous poll's time, whether it came too soon (then the interval grows by five seconds); an
 * approved authorization is claimed (`claimApproved`), so a device code yields tokens once. The caller runs what
 * follows in `spentUnlessPutBack`: a fault puts it back (`putBackApproved`), and the next poll redeems it; an answer or
 * a refusal spends it.
 *
 * The poll of a device code (`device_code`) or of a CIBA request (`auth_req_id`, OpenID CIBA Core §10.1, §11: the
 * same `authorization_pending`, `slow_down`, `expired_token` and `access_denied`), each only by its own grant.
 */
export async function redeemPolled(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  kind: "device" | "ciba",
): Promise<ClaimedApproval> {
  const name = kind === "device" ? "device_code" : "auth_req_id";
  const deviceCode = param(params, name, 100);
  if (!deviceCode) throw new OAuth2Error("invalid_request", `${name} is required`);
  const hash = await sha256Hex(deviceCode);
  const now = deps.now();
  const ofClient = and(
    eq(deviceAuthorizations.deviceCodeHash, hash),
    eq(deviceAuthorizations.clientId, client.clientId),
    eq(deviceAuthorizations.kind, kind),
  );
  const soon = sql`${deviceAuthorizations.lastPolledAt} IS NOT NULL AND ${now} - ${deviceAuthorizations.lastPolledAt} < ${deviceAuthorizations.intervalSeconds} * 1000`;
  const polled = await deps.db
    .update(deviceAuthorizations)
    .set({
      lastPolledAt: now,
      tooFast: sql`CASE WHEN ${soon} THEN 1 ELSE 0 END`,
      intervalSeconds: sql`CASE WHEN ${soon} THEN ${deviceAuthorizations.intervalSeconds} + ${SLOW_DOWN_SECONDS} ELSE ${deviceAuthorizations.intervalSeconds} END`,
    })
    .where(ofClient)
    .returning()
    .get();
  const what = kind === "device" ? "the device code" : "auth_req_id";
  if (!polled) throw new OAuth2Error("invalid_grant", `${what} is invalid or was used`);
  if (polled.expiresAt <= now) {
    await deps.db.delete(deviceAuthorizations).where(ofClient);
    throw new OAuth2Error("expired_token", `${what} expired: start again`);
  }
  if (polled.status === "denied") {
    await deps.db.delete(deviceAuthorizations).where(ofClient);
    throw new OAuth2Error("access_denied", "the user denied the request");
  }
  if (polled.status === "pending") {
    if (polled.tooFast)
      throw new OAuth2Error("slow_down", `poll at most every ${polled.intervalSeconds} seconds`);
    throw new OAuth2Error("authorization_pending", "the user has not approved the request yet");
  }
  const claimed = await claimApproved(deps, hash, ofClient);
  if (!claimed) throw new OAuth2Error("invalid_grant", `${what} is invalid or was used`);
  return claimed;
}

/**
 * Claims the approved authorization in one `UPDATE … RETURNING` that moves its device code's hash to a key only this
 * request knows (`taken:<uuid>`; a code's hash is a SHA-256 in hex, so no poll ever meets it): of two polls at once,
 * one wins. The claim's own fault (D1 may have run it and lost the answer) puts it back by that key, right whether it
 * ran or not; one `DELETE … RETURNING`, whose lost answer left no row to put back, spent the approval for nothing: the
 * next poll was refused and the person started over. The claimed row keeps its status, user code and expiry: no page
 * or CIBA read finds it (they read pending rows), and the daily sweep removes it once expired if its spend was lost.
 */
async function claimApproved(
  deps: Deps,
  hash: string,
  ofClient: SQL | undefined,
): Promise<ClaimedApproval | undefined> {
  const claim = `taken:${crypto.randomUUID()}`;
  const ofClaim = eq(deviceAuthorizations.deviceCodeHash, claim);
  const putBack = putBackApproved(deps, { claim, deviceCodeHash: hash });
  const claimed = await onFaultPutBack({ putBack }, () =>
    deps.db
      .update(deviceAuthorizations)
      .set({ deviceCodeHash: claim })
      .where(
        and(
          ofClient,
          eq(deviceAuthorizations.status, "approved"),
          isNotNull(deviceAuthorizations.userId),
          isNotNull(deviceAuthorizations.authTime),
        ),
      )
      .returning()
      .get(),
  );
  if (!claimed?.userId || claimed.authTime === null) return undefined;
  return {
    row: { ...claimed, userId: claimed.userId, authTime: claimed.authTime, deviceCodeHash: hash },
    putBack,
    spend: () => deps.db.delete(deviceAuthorizations).where(ofClaim).run(),
  };
}

/**
 * The approved row `claimApproved` claimed, given its device code's hash again: for a fault of the claim itself (its
 * lost answer) or after it (the approver's read, the grant's writes, the tokens' signing key: the 503 the device
 * retries). Without it the next poll was refused and the person who approved on their phone had to start the device
 * flow over: a new code typed, signed in and approved again. Only this request's claim is renamed (a no-op when the
 * claim never ran, or its row is gone: a user's deletion, the sweep); the row keeps its expiry, so an expired code
 * stays dead.
 */
function putBackApproved(deps: Deps, claimed: { claim: string; deviceCodeHash: string }): PutBack["putBack"] {
  return putBackWith("device authorization", () =>
    deps.db
      .update(deviceAuthorizations)
      .set({ deviceCodeHash: claimed.deviceCodeHash })
      .where(eq(deviceAuthorizations.deviceCodeHash, claimed.claim))
      .run(),
  );
}
