import { Hono } from "hono";
import { activeMembership } from "../auth";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { scopeClaims } from "./claims";
import { dpopEndpoint } from "./dpop";
import { heldAccessToken, resourceError } from "./dpop-resources";
import { findLiveGrant } from "./grants";
import { type Ctx, NO_STORE } from "./route-support";
import { isForClient, verifyOAuth2AccessToken } from "./tokens";
import { OAUTH2_DIRECT_ERRORS, oauth2ErrorSchema, userinfoSchema } from "./wire";

/** `GET` and `POST /oauth2/userinfo` (OIDC Core §5.3): the claims of the bearer token's user. */

/**
 * An OAuth2 access token whose grant stands, as `Bearer`, or as `DPoP` with a proof by the key it is bound to
 * (dpop-resources.ts); else 401 `invalid_token` (or `invalid_dpop_proof`).
 */
async function bearerGrant(c: Ctx) {
  const { payload, scheme } = await heldAccessToken(c, async (token) => {
    const verified = await verifyOAuth2AccessToken(c.var.config, token);
    // Userinfo serves the client about its user: a token bound to another resource (RFC 8707) or about no user
    // (client_credentials) is not one for it.
    return verified?.grant_id && isForClient(verified) ? verified : null;
  });
  const live = await findLiveGrant(c.var.deps, payload.grant_id!);
  if (!live || live.grant.clientId !== payload.client_id || live.user.id !== payload.sub) {
    throw resourceError(scheme, "invalid_token", "the access token is invalid, expired or revoked");
  }
  return { payload, scheme, user: live.user, grant: live.grant };
}

async function userinfo(c: Ctx) {
  const { payload, scheme, user, grant } = await bearerGrant(c);
  const scopes = payload.scope.split(" ");
  if (!scopes.includes("openid"))
    throw resourceError(scheme, "insufficient_scope", "userinfo needs the openid scope");
  // The token's organization while its grant has it and the membership is active, as introspection reports it.
  const org =
    payload.org_id && grant.orgId === payload.org_id
      ? await activeMembership(c.var.deps, payload.org_id, user.id)
      : undefined;
  return c.json(
    { sub: user.id, ...scopeClaims(user, scopes), ...(org ? { org_id: org.orgId } : {}) },
    200,
    NO_STORE,
  );
}

const USERINFO_DOC = operation({
  summary: "UserInfo",
  description:
    "The claims of the token's user that its scopes allow (`openid` required: 403 `insufficient_scope`). Only " +
    "tokens issued for the client itself (no resource) and whose grant stands. A DPoP-bound token (RFC 9449) comes " +
    "as `Authorization: DPoP <token>` with a `DPoP` proof by its key (`ath` included); sent as `Bearer` it is " +
    "refused (401 `invalid_token`); a bad proof: 401 `invalid_dpop_proof`, or `use_dpop_nonce` with `DPoP-Nonce`.",
  security: "oauth2-token",
  answers: {
    200: { description: "The claims.", schema: userinfoSchema },
    ...OAUTH2_DIRECT_ERRORS,
    403: { description: "`insufficient_scope`.", schema: oauth2ErrorSchema },
  },
});

export const userinfoRoutes = new Hono<AppEnv>()
  .get("/oauth2/userinfo", USERINFO_DOC, dpopEndpoint, userinfo)
  .post("/oauth2/userinfo", USERINFO_DOC, dpopEndpoint, userinfo);
