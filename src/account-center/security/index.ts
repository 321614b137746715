import { Hono } from "hono";
import { html } from "hono/html";
import { listPersonalAccessTokens, listSecurityKeysWithBackup } from "../../auth";
import type { BrowserSession } from "../../browser/session";
import type { Catalogue } from "../../browser/text";
import type { AppEnv } from "../../http/app-env";
import { listUserOrgs } from "../../orgs";
import { identitiesOf } from "../../providers";
import { connectionsOf } from "../../vault";
import type { Ctx } from "../forms";
import { isRecentAuth } from "../recent-auth";
import { CONNECTIONS, connectionsSection } from "./connections";
import { MEMBERSHIPS_SHOWN, ORGANIZATIONS, organizationRoutes, organizationsSection } from "./organizations";
import { passkeyRoutes } from "./passkey-routes";
import { PASSKEYS, passkeysSection } from "./passkeys";
import { providerRoutes } from "./provider-routes";
import { PROVIDERS, providersSection } from "./providers";
import { SECOND_STEP, secondStepRoutes, secondStepSection } from "./second-step-choice";
import { tokenRoutes } from "./token-routes";
import { TOKENS, tokensSection } from "./tokens";
import { TWO_STEP, twoStepSection } from "./two-step";
import { twoStepRoutes } from "./two-step-routes";

/**
 * The account center's security sections (contract §13): two-step verification and recovery codes, passkeys,
 * personal access tokens, linked providers, organizations. What the frame (src/account-center/) uses of this folder;
 * each section is a renderer and its form routes, over the service's own functions (src/auth, src/providers,
 * src/orgs index.ts), never a copy of their rules or queries.
 */

export { securityFormTargets } from "./form-targets";
export { SECURITY_STYLE } from "./style";
export { securityNotice } from "./words";

/** The sections for the navigation, in the page's order. */
export function securityNav(catalogue: Catalogue, vaultOn = false): { id: string; label: string }[] {
  const w = catalogue.accountSecurity;
  return [
    { id: TWO_STEP, label: w.twoStep.title },
    { id: SECOND_STEP, label: catalogue.secondStep.title },
    { id: PASSKEYS, label: w.passkeys.title },
    { id: TOKENS, label: w.tokens.title },
    { id: PROVIDERS, label: w.providers.title },
    ...(vaultOn ? [{ id: CONNECTIONS, label: catalogue.vault.title }] : []),
    { id: ORGANIZATIONS, label: w.organizations.title },
  ];
}

/**
 * The sections for the main page. What each shows comes from the service's lists; whether its changes show as forms
 * or as a "confirm it's you" link depends on how recently (and, for elevated operations, how) the person confirmed.
 */
export async function securitySections(c: Ctx, session: BrowserSession, catalogue: Catalogue) {
  const deps = c.var.deps;
  const userId = session.user.id;
  const vaultOn = c.var.config.vault.enabled;
  const [keys, tokens, identities, connections, orgs, recent, elevated] = await Promise.all([
    listSecurityKeysWithBackup(deps.shards.ofUser(userId), userId),
    listPersonalAccessTokens(deps, userId),
    identitiesOf(deps, userId),
    vaultOn ? connectionsOf(deps, userId) : [],
    listUserOrgs(deps, userId, { limit: MEMBERSHIPS_SHOWN }),
    isRecentAuth(c, session),
    isRecentAuth(c, session, { elevated: true }),
  ]);
  const signed = { session, catalogue };
  return html`${twoStepSection(c, signed, recent)}
${await secondStepSection(c, signed, keys.length, recent)}
${passkeysSection(c, signed, keys, keys.length ? elevated : recent)}
${tokensSection(c, signed, tokens, elevated)}
${providersSection(c, signed, identities, recent)}
${vaultOn ? connectionsSection(c, signed, connections) : ""}
${organizationsSection(c, signed, orgs.items)}`;
}

/**
 * The main page needs no script of ours: the passkey ceremony runs on its own step (passkey-script.ts), with the
 * options the server made for it. Kept for the frame's interface.
 */
export function securityScript(_apiPath: string): string | undefined {
  return undefined;
}

/** Every form post of the sections, under `/security/…` of the account center. */
export const securityRoutes = new Hono<AppEnv>()
  .route("/", twoStepRoutes)
  .route("/", secondStepRoutes)
  .route("/", passkeyRoutes)
  .route("/", tokenRoutes)
  .route("/", providerRoutes)
  .route("/", organizationRoutes);
