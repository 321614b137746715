import { and, count, eq, gt } from "drizzle-orm";
import { base64url } from "jose";
import { activeMembership, findUserByEmail, findUserById } from "../../auth";
import { deviceAuthorizations, type OAuth2ClientRow, type UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { encrypt, sha256Hex } from "../../lib/crypto";
import { toHex } from "../../lib/hex";
import { hmacSubkey } from "../../lib/subkeys";
import { requestedAuthorizationDetails } from "../authorization-details";
import { CIBA_GRANT } from "../clients";
import { OAuth2Error } from "../errors";
import { verifyIdTokenHint } from "../id-token-hint";
import type { OAuth2Params } from "../params";
import { requestedResources } from "../resources";
import { sendApprovalMail } from "./approval-mail";
import { type Hint, INTERVAL_SECONDS, readBackchannelParams } from "./request-params";

/**
 * `POST /oauth2/bc-authorize` (OpenID CIBA Core 1.0 §7): a client an admin allowed CIBA asks a user, named by a hint,
 * to approve on their own device. The request is a row of `device_authorizations` (`kind = ciba`), polled, decided and
 * consumed by the device grant's machinery (device.ts); the user is mailed a link to the approval page and sees the
 * request in the account center.
 *
 * A hint that names nobody (or a disabled, anonymous, or outside-the-organization user) is answered exactly as one
 * that names somebody: an `auth_req_id` that stays pending until it expires, counted against the same limit under
 * the hint's HMAC. CIBA §13's `unknown_user_id` would let any client with CIBA list the deployment's users.
 */

export interface BackchannelAnswer {
  auth_req_id: string;
  expires_in: number;
  interval: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The user a hint names, if the client may ask them; undefined otherwise, whatever the reason. */
async function askedUser(deps: Deps, client: OAuth2ClientRow, hint: Hint): Promise<UserRow | undefined> {
  let user: UserRow | undefined;
  if (hint.kind === "id_token_hint") {
    const verified = await verifyIdTokenHint(deps.config, hint.value);
    // §7.1: an ID token this server issued to this client; anything else is the client's mistake, not a lookup.
    if (!verified || verified.clientId !== client.clientId) {
      throw new OAuth2Error(
        "invalid_request",
        "id_token_hint is not an ID token this server issued to this client",
      );
    }
    user = UUID.test(verified.sub) ? await findUserById(deps.shards, verified.sub) : undefined;
  } else if (hint.value.includes("@")) {
    user = await findUserByEmail(deps.shards, hint.value);
  } else if (UUID.test(hint.value)) {
    user = await findUserById(deps.shards, hint.value.toLowerCase());
  }
  if (!user || user.disabled || user.isAnonymous) return undefined;
  // An organization's client asks only that organization's active members.
  if (
    client.backchannelOrganization &&
    !(await activeMembership(deps, client.backchannelOrganization, user.id))
  ) {
    return undefined;
  }
  return user;
}

/** Who a request waits on: the user's id, or for a hint naming nobody the hint's HMAC (so it is limited alike). */
async function subjectOf(deps: Deps, user: UserRow | undefined, hint: Hint): Promise<string> {
  if (user) return user.id;
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "ciba-hints");
  const text = new TextEncoder().encode(`${hint.kind}:${hint.value.toLowerCase()}`);
  return `hint:${toHex(await crypto.subtle.sign("HMAC", key, text))}`;
}

const waitingOn = (subject: string, now: number) =>
  and(
    eq(deviceAuthorizations.kind, "ciba"),
    eq(deviceAuthorizations.subject, subject),
    eq(deviceAuthorizations.status, "pending"),
    gt(deviceAuthorizations.expiresAt, now),
  );

export async function startBackchannelAuthentication(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
): Promise<BackchannelAnswer> {
  if (!client.grantTypes.includes(CIBA_GRANT) || !client.backchannelTokenDeliveryMode) {
    throw new OAuth2Error("unauthorized_client", "an administrator has not allowed this client CIBA");
  }
  const asked = readBackchannelParams(client, params);
  const resources = requestedResources(deps.config, client, params.resources);
  // RFC 9396 §3 on CIBA: checked against the client's types now; the approval page shows them by their templates.
  const authorizationDetails = requestedAuthorizationDetails(client, params.get("authorization_details"));
  const user = await askedUser(deps, client, asked.hint);
  const subject = await subjectOf(deps, user, asked.hint);
  const authReqId = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  const deviceCodeHash = await sha256Hex(authReqId);
  const now = deps.now();
  const { config } = deps;
  const pingSealed = asked.notificationToken
    ? await encrypt(
        config.secrets.encryptionKey,
        JSON.stringify({ authReqId, token: asked.notificationToken }),
      )
    : null;
  const row = await deps.db
    .insert(deviceAuthorizations)
    .values({
      deviceCodeHash,
      userCodeHash: `ciba:${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`,
      clientId: client.clientId,
      scopes: asked.scopes,
      resources,
      status: "pending",
      intervalSeconds: INTERVAL_SECONDS,
      createdAt: now,
      expiresAt: now + asked.expiresIn * 1000,
      kind: "ciba",
      subject,
      bindingMessage: asked.bindingMessage ?? null,
      acrValues: asked.acrValues.length > 0 ? asked.acrValues : null,
      orgId: client.backchannelOrganization,
      pingSealed,
      authorizationDetails: authorizationDetails ?? null,
    })
    .returning()
    .get();
  const forget = () =>
    deps.db.delete(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, deviceCodeHash));
  // Counted after the insert, this one included: two requests racing for the last place cannot both keep it.
  const waiting = await deps.db
    .select({ n: count() })
    .from(deviceAuthorizations)
    .where(waitingOn(subject, now))
    .get();
  if ((waiting?.n ?? 0) > config.oauth2.cibaMaxPendingPerUser) {
    await forget();
    throw new OAuth2Error(
      "access_denied",
      "too many requests are waiting for this user's approval: wait for them to be decided or expire",
      undefined,
      undefined,
      403,
    );
  }
  if (user && row) {
    try {
      await sendApprovalMail(deps, user, client, row);
    } catch (error) {
      // Nothing is left pending that the user was never told of; the client hears 503 and may ask again.
      await forget();
      throw error;
    }
    deps.audit({
      type: "oauth2.ciba-requested",
      userId: user.id,
      detail: {
        clientId: client.clientId,
        scopes: asked.scopes,
        bindingMessage: asked.bindingMessage ?? null,
      },
    });
  }
  return { auth_req_id: authReqId, expires_in: asked.expiresIn, interval: INTERVAL_SECONDS };
}
