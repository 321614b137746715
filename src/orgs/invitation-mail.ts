import { findUserByEmail, findUserById, toWireUser } from "../auth";
import type { OrganizationRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { renderTemplate } from "../mail/templates";

/**
 * The invitation mail (template `org-invitation`, overridable through `AUTH_EMAIL_TEMPLATES` like the others). Its
 * language: the invitee's own when the address already has an account, else the inviter's, else the default
 * (docs/organizations.md). The link leads to the app (`redirectTo`, allow-listed; default the client URL) with
 * `ticket` and `type=orgInvitation` in its query, Nhost's shape for mailed links: the app signs the user in or up
 * with the invited address, then calls `POST /orgs/invitations/accept {ticket}`.
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
  const locale = invitee?.locale ?? inviter?.locale ?? config.AUTH_LOCALE_DEFAULT;
  const link = new URL(invitation.redirectTo);
  link.searchParams.set("ticket", invitation.ticket);
  link.searchParams.set("type", "orgInvitation");
  const message = renderTemplate(config.mailTemplates, "org-invitation", locale, config.AUTH_LOCALE_DEFAULT, {
    displayName: invitee?.displayName ?? invitation.email,
    email: invitation.email,
    orgName: invitation.org.name,
    inviterName: inviter?.displayName ?? invitation.org.name,
    role: invitation.role,
    locale,
    link: link.toString(),
    ticket: invitation.ticket,
    serverUrl: config.AUTH_SERVER_URL,
    clientUrl: config.AUTH_CLIENT_URL,
  });
  await deps.mailer.send({
    to: invitation.email,
    ...message,
    about: {
      template: "org-invitation",
      locale,
      link: link.toString(),
      user: invitee ? toWireUser(invitee) : null,
    },
  });
}
