import { html } from "hono/html";
import type { PageText } from "../browser/page-text";
import { errorBox, hidden } from "../browser/render";
import type { PendingInvitation } from "../orgs";

/** The invitation page's views: what the invitation says, the accept step, the end, and a gone invitation. */

/** "<org> invites <email> to join as <role>": the sentence every view of an invitation starts from. */
export const invitationLead = (t: PageText, invitation: PendingInvitation) =>
  html`<p class="lead">${t.invitationLead(invitation.org.name, invitation.email, invitation.role)}</p>`;

/** In place of the consent step: accept the invitation as the signed-in person, or switch accounts. */
export function joinForm(input: {
  t: PageText;
  action: string;
  switchAction: string;
  requestId: string;
  invitation: PendingInvitation;
  userLabel: string;
  error?: string;
}) {
  const { t } = input;
  return html`<h1>${input.invitation.org.name}</h1>
${invitationLead(t, input.invitation)}
${errorBox(input.error)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <div class="actions"><button class="primary" type="submit" name="decision" value="allow">${t.joinAs(input.userLabel)}</button></div>
</form>
<div class="who">${t.signedInAs} ${input.userLabel}.
<form method="post" action="${input.switchAction}">${hidden(input.requestId)}<button class="link-button" type="submit">${t.useAnotherAccount}</button></form></div>`;
}

export function joined(t: PageText, orgName: string, role: string, appUrl: string) {
  return html`<h1>${t.joinedTitle(orgName)}</h1>
<p class="lead">${t.joinedLead(role)}</p>
<div class="actions"><a href="${appUrl}">${t.goToApp}</a></div>`;
}

export function invitationGone(t: PageText) {
  return html`<h1>${t.invitationTitle}</h1>
<p class="lead">${t.errors.invitationGone}</p>`;
}
