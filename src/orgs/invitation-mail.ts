import { findUserByEmail, findUserById, toWireUser } from "../auth";
import type { Config } from "../config";
import type { OrganizationRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { renderTemplate } from "../mail/templates";

/** The hosted invitation page (src/pages/invitation-routes.ts), under `AUTH_SERVER_URL`, beside the device page. */
export const INVITATION_PAGE_PATH = "/oauth2/invitation";

/**
 * Where the mailed link leads (docs/organizations.md, "The link"): the hosted page, where the person signs in or up
 * with the invited address and accepts, when the service serves it (the authorization server on, its built-in page
 * in use) and the inviter named no app of its own (`redirectTo` absent, or the default). Otherwise the app, as
 * before and as Nhost's mailed links do: `redirectTo` with `ticket` and `type=orgInvitation` in its query; the app
 * signs the user in or up, then calls `POST /orgs/invitations/accept {ticket}`.
 */
export function invitationLink(config: Config, ticket: string, redirectTo: string): string {
  const hosted =
    config.oauth2.enabled && !config.oauth2.loginUrl && redirectTo === config.urls.defaultRedirect;
  const link = new URL(hosted ? config.urls.auth(INVITATION_PAGE_PATH) : redirectTo);
  link.searchParams.set("ticket", ticket);
  if (!hosted) link.searchParams.set("type", "orgInvitation");
  return link.toString();
}

/**
 * The invitation mail (template `org-invitation`, overridable through `AUTH_EMAIL_TEMPLATES` like the others). Its
 * language: the invitee's own when the address already has an account, else the inviter's, else the default
 * (docs/organizations.md). The link: `invitationLink`.
 */
export async function mailInvitation(
  deps: Deps,
  invitation: { org: OrganizationRow; email: string; role: string; ticket: string; redirectTo: string },
  inviterId: string | null,
): Promise<void> {
  const { config } = deps;
  const [invitee, inviter] = await Promise.all([
    findUserByEmail(deps.shards, invitation.email),
    inviterId ? findUserById(deps.shards, inviterId) : undefined,
  ]);
  const locale = invitee?.locale ?? inviter?.locale ?? config.locales.default;
  const link = invitationLink(config, invitation.ticket, invitation.redirectTo);
  const message = renderTemplate(config.mail.templates, "org-invitation", locale, config.locales.default, {
    displayName: invitee?.displayName ?? invitation.email,
    email: invitation.email,
    orgName: invitation.org.name,
    inviterName: inviter?.displayName ?? invitation.org.name,
    role: invitation.role,
    locale,
    link,
    ticket: invitation.ticket,
    serverUrl: config.urls.server,
    clientUrl: config.urls.client,
  });
  await deps.mailer.send({
    to: invitation.email,
    ...message,
    about: {
      template: "org-invitation",
      locale,
      link,
      user: invitee ? toWireUser(invitee) : null,
    },
  });
}
