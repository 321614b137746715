import { Hono } from "hono";
import { backToPage, type Ctx, paths } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { pageText } from "../browser/page-text";
import { readBrowserSession } from "../browser/session";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { refuseWhileImpersonating } from "../http/impersonation";
import { sha256Hex } from "../lib/crypto";
import { closeInteraction, type InteractionRequest, openInvitationInteraction } from "../oauth2";
import { acceptInvitationByHash, findPendingInvitation, type PendingInvitation } from "../orgs";
import { invitationGone, joined, joinForm } from "./render-invitation";
import { signInPage } from "./sign-in-pages";

/**
 * The hosted invitation page (contract organizations.md §1, docs/organizations.md "The link"), modelled on the
 * device page: the mailed link `/oauth2/invitation?ticket=…` becomes a page request (like a device's, tied to no
 * client) that goes through the page's own sign-in and sign-up, and ends in joining the organization instead of a
 * code. The request keeps only the ticket's hash; the invitation is re-read by it at every step, never consumed
 * until the person presses accept (`acceptInvitationByHash`: one conditional `DELETE … RETURNING`, bound to the
 * signed-in user's verified address).
 *
 * Threats: the ticket in a URL leaks (history, a forwarded mail, a proxy's log): it is single use, seven days, and
 * only the invited address, verified, can spend it; opening the link spends nothing. Forced joining (an attacker
 * sending a signed-in victim a link to an invitation of theirs): joining is a same-origin form post the person makes
 * (`formRequest`'s Origin check), never a GET. Login CSRF: the page's sign-ins are its own, bound to the browser.
 */

/** An unknown, used or expired invitation: a page saying so (404: the ticket names nothing that stands). */
const gone = (c: Ctx) => {
  const t = pageText(c);
  return render(c, 404, t.invitationTitle, invitationGone(t), { t });
};

export const invitationPageRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const deps = c.var.deps;
  const ticket = (c.req.query("ticket") ?? "").slice(0, 200);
  const ticketHash = ticket ? await sha256Hex(ticket) : "";
  const invitation = ticketHash ? await findPendingInvitation(deps, ticketHash) : undefined;
  if (!invitation) return gone(c);
  // A page request for this invitation: no client, no redirect; the invited address prefills the sign-in form.
  const requestId = await openInvitationInteraction(deps, ticketHash, invitation.email);
  // On to the page under a request id: the ticket leaves the address bar.
  return backToPage(c, requestId);
});

/** The page's next step for an invitation: sign in (or up) with the invited address, or accept as the signed-in one. */
export async function invitationStep(
  c: Ctx,
  request: InteractionRequest,
  invitation: PendingInvitation,
  error?: { status: 403; message: string },
) {
  const session = await readBrowserSession(c);
  const t = pageText(c, request.uiLocales, session?.user.locale);
  if (!session) {
    return signInPage(c, request, invitation.org.name, {
      intro: [t.invitationLead(invitation.org.name, invitation.email, invitation.role), t.invitationSignIn],
    });
  }
  const { user } = session;
  return render(
    c,
    error?.status ?? 200,
    t.invitationTitle,
    joinForm({
      t,
      action: paths(c).consent,
      switchAction: paths(c).switch,
      requestId: request.id,
      invitation,
      userLabel: user.email ?? user.phoneNumber ?? (user.displayName || user.id),
      error: error?.message,
    }),
    { t },
  );
}

/**
 * The accept (the page's consent post, for an invitation): joins through the same rule as the API's accept. A
 * refusal for the address shows the page again with why, and leaves the ticket for its addressee.
 */
export async function joinInvitation(c: Ctx, request: InteractionRequest, invitation: PendingInvitation) {
  const deps = c.var.deps;
  const session = await readBrowserSession(c);
  if (!session || !request.invitation) return backToPage(c, request.id);
  // Joining in the user's name is refused to an impersonation here too (operators.md §1), not only at the session read.
  refuseWhileImpersonating(session.actor, "accepting an invitation");
  const t = pageText(c, request.uiLocales, session.user.locale);
  try {
    const { org, role } = await acceptInvitationByHash(deps, request.invitation.ticketHash, session.user.id);
    closeInteraction(deps, request.id);
    return render(c, 200, t.joinedTitle(org.name), joined(t, org.name, role, deps.config.urls.client), {
      t,
    });
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    if (error.code !== "invitation-email-mismatch") return gone(c);
    const own = session.user.email?.toLowerCase() === invitation.email;
    const message = own ? t.errors.invitationUnverified : t.errors.invitationOtherAddress(invitation.email);
    return invitationStep(c, request, invitation, { status: 403, message });
  }
}
