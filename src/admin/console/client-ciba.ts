import { Hono } from "hono";
import { html } from "hono/html";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { describeIssues } from "../../http/validation";
import { type ClientBody, clientBodySchema, getClient, replaceClient, type WireClient } from "../../oauth2";
import { action, back, type Ctx } from "./handlers";
import type { Chrome } from "./pages";

/**
 * A client's OpenID CIBA settings in the console (docs/agents.md): whether an admin allows it to ask users for
 * approval on a second device, how it hears the outcome (poll, or ping at its notification endpoint, under the
 * outbound-URL policy), and the organization it is confined to. The same rules as the admin API (`clientBodySchema`);
 * every other setting of the client stays as it is.
 */

const CIBA_GRANT = "urn:openid:params:grant-type:ciba";

/** The client's current settings as the admin API's body: a replace that changes only what is given. */
export function bodyOf(client: WireClient): ClientBody {
  return {
    clientName: client.clientName,
    redirectUris: client.redirectUris,
    scopes: client.scopes as ClientBody["scopes"],
    grantTypes: client.grantTypes as ClientBody["grantTypes"],
    tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
    accessTokenLifetime: client.accessTokenLifetime,
    refreshTokenLifetime: client.refreshTokenLifetime,
    applicationType: client.applicationType,
    resources: client.resources ?? undefined,
    logoUri: client.logoUri,
    dpopBoundAccessTokens: client.dpopBoundAccessTokens,
    requirePushedAuthorizationRequests: client.requirePushedAuthorizationRequests,
    postLogoutRedirectUris: client.postLogoutRedirectUris,
    backchannelLogoutUri: client.backchannelLogoutUri,
    backchannelLogoutSessionRequired: client.backchannelLogoutSessionRequired,
    backchannelTokenDeliveryMode: client.backchannelTokenDeliveryMode,
    backchannelClientNotificationEndpoint: client.backchannelClientNotificationEndpoint,
    backchannelOrganization: client.backchannelOrganization,
    jwks: client.jwks as ClientBody["jwks"],
    jwksUri: client.jwksUri,
    trustedIssuers: client.trustedIssuers as ClientBody["trustedIssuers"],
    authorizationDetailsTypes: client.authorizationDetailsTypes as ClientBody["authorizationDetailsTypes"],
    fedcmOrigins: client.fedcmOrigins,
    policyUri: client.policyUri,
    tosUri: client.tosUri,
  };
}

/** The section of the client's page. A public client cannot use CIBA: it is told why instead of a form. */
export function cibaSection(chrome: Chrome, client: WireClient) {
  const path = `/clients/${encodeURIComponent(client.clientId)}/ciba`;
  const mode = client.backchannelTokenDeliveryMode ?? "off";
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${mode === value ? "selected" : ""}>${label}</option>`;
  return html`<h2 id="ciba">Approval on a second device (CIBA)</h2>
<p class="muted">Lets this client ask a user, by email address or user id, to approve a request on their own device (OpenID CIBA): the user is mailed and sees it in their account center.</p>
${
  client.tokenEndpointAuthMethod === "none"
    ? html`<p class="muted">A public client cannot use CIBA: it needs a secret or a key.</p>`
    : html`<form method="post" action="${chrome.base}${path}" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Delivery <select name="mode">${option("off", "off: not allowed")}${option("poll", "poll: the client polls the token endpoint")}${option("ping", "ping: the client is told at its endpoint, then polls")}</select></label>
  <label>Notification endpoint (ping only; https) <input name="endpoint" type="url" maxlength="2048" spellcheck="false" value="${client.backchannelClientNotificationEndpoint ?? ""}"></label>
  <label>Only members of the organization (id; empty: anyone) <input name="organization" maxlength="100" spellcheck="false" value="${client.backchannelOrganization ?? ""}"></label>
  <button class="primary" type="submit">Save CIBA settings</button>
</form>`
}`;
}

async function cibaBody(c: Ctx, current: WireClient): Promise<ClientBody> {
  const form = await c.req.parseBody();
  const text = (name: string) => (typeof form[name] === "string" ? (form[name] as string).trim() : "");
  const mode = text("mode");
  const on = mode === "poll" || mode === "ping";
  const grants = current.grantTypes.filter((grant) => grant !== CIBA_GRANT);
  const parsed = clientBodySchema.safeParse({
    ...bodyOf(current),
    grantTypes: on ? [...grants, CIBA_GRANT] : grants.length > 0 ? grants : ["authorization_code"],
    backchannelTokenDeliveryMode: on ? mode : null,
    backchannelClientNotificationEndpoint: mode === "ping" ? text("endpoint").slice(0, 2100) || null : null,
    backchannelOrganization: on ? text("organization").slice(0, 100) || null : null,
  });
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

export const consoleCibaRoutes = new Hono<AppEnv>().post(
  "/clients/:clientId/ciba",
  action(async (c) => {
    const clientId = c.req.param("clientId")!;
    const current = await getClient(c.var.deps, clientId);
    await replaceClient(c.var.deps, clientId, await cibaBody(c, current));
    auditAdminAction(c, "oauth2.client-update", null, { clientId, ciba: true });
    return back(c, `/clients/${encodeURIComponent(clientId)}`, "saved");
  }),
);
