import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { revokeByRefreshToken } from "../auth";
import type { Catalogue } from "../browser/text";
import { signalsOnPage } from "../pages";
import { DELETE, deleteSection } from "./delete";
import { EMAIL, emailSection } from "./email";
import { accountCatalogue, apiPath, type Ctx, type Refusal, type SectionView, type Signed } from "./forms";
import { accountFrame, type NavItem } from "./frame";
import { PASSWORD, passwordSection } from "./password";
import { PROFILE, profileSection } from "./profile";
import { securityNav, securityNotice, securityScript, securitySections } from "./security";
import { SESSIONS, sessionsSection } from "./sessions";
import { standalonePage } from "./sign-out";
import { showsWaiting, WAITING, waitingSection } from "./waiting-approvals";

/**
 * The account center's page (contract §13): the frame, the navigation, and every section in order — the core ones
 * here (profile, email, password, devices), the security sections (./security: two-step verification, passkeys,
 * access tokens, providers, organizations), and the danger zone last. A form refused in a section shows the page again
 * with the reason in that section and the refusal's status.
 */

/** The notices a form post may ask for (`?notice=`), in the page's words; the security sections answer their own. */
function noticeOf(catalogue: Catalogue, key: string | undefined): string | undefined {
  if (!key) return undefined;
  const words = catalogue.account.notices;
  const mine: Record<string, string> = {
    "profile-saved": words.profileSaved,
    "email-sent": words.emailSent,
    "password-changed": words.passwordChanged,
    "password-changed-others-out": words.passwordChangedOthersOut,
    "session-revoked": words.sessionRevoked,
    "others-revoked": words.othersRevoked,
    confirmed: words.confirmed,
  };
  return mine[key] ?? securityNotice(catalogue, key.slice(0, 60));
}

function navOf(c: Ctx, catalogue: Catalogue, vaultOn: boolean): NavItem[] {
  const { account } = catalogue;
  return [
    // OpenID CIBA requests waiting for the user's decision: first, as what needs them now.
    ...(showsWaiting(c) ? [{ id: WAITING, label: catalogue.ciba.account.title }] : []),
    { id: PROFILE, label: account.profile.title },
    { id: EMAIL, label: account.email.title },
    { id: PASSWORD, label: account.password.title },
    { id: SESSIONS, label: account.sessions.title },
    ...securityNav(catalogue, vaultOn),
    { id: DELETE, label: account.deletion.title },
  ];
}

/** The notices after which the page tells the browser the account's passkeys and name (the Signal API). */
const SIGNALLED_NOTICES = new Set(["profile-saved", "security-passkey-removed", "security-passkey-added"]);

export async function accountPage(c: Ctx, signed: Signed, refused?: Refusal): Promise<Response> {
  const { session, catalogue } = signed;
  const view = (section: string): SectionView => ({
    session,
    catalogue,
    ...(refused?.section === section ? { error: refused.error } : {}),
  });
  const sections: (HtmlEscapedString | Promise<HtmlEscapedString>)[] = [
    ...(showsWaiting(c) ? [waitingSection(c, view(WAITING))] : []),
    profileSection(c, view(PROFILE)),
    emailSection(c, view(EMAIL)),
    passwordSection(c, view(PASSWORD)),
    sessionsSection(c, view(SESSIONS)),
    securitySections(c, session, catalogue),
    deleteSection(c, view(DELETE)),
  ];
  // After a change the password manager should hear of (docs/passkeys.md, the Signal API).
  const notice = c.req.query("notice");
  const signals =
    !refused && notice && SIGNALLED_NOTICES.has(notice)
      ? await signalsOnPage(c.var.deps, session.user, session.actor)
      : undefined;
  if (signals) sections.push(signals.element);
  const script = signals?.script ?? securityScript(apiPath(c));
  return accountFrame(c, {
    session,
    catalogue,
    status: refused?.status ?? 200,
    title: catalogue.account.title,
    nav: navOf(c, catalogue, c.var.config.vault.enabled),
    notice: refused ? undefined : noticeOf(catalogue, c.req.query("notice")),
    body: html`${sections}`,
    ...(script ? { script } : {}),
  });
}

/**
 * The landing of the email change's link (email.ts): `/verify` confirmed the new address, which ended every session
 * (this browser's too), and made one for the link, whose refresh token is in this URL. Nothing here uses it: it is
 * ended at once, and the person signs in with the new address. A link that did not work (expired, used) says so.
 */
export async function emailLinkLanding(c: Ctx): Promise<Response> {
  const catalogue = accountCatalogue(c);
  const { account } = catalogue;
  const refreshToken = c.req.query("refreshToken");
  if (refreshToken) await revokeByRefreshToken(c.var.deps, refreshToken.slice(0, 100));
  if (c.req.query("error"))
    return standalonePage(c, catalogue, account.linkProblemTitle, account.linkProblemLead, 400);
  return standalonePage(c, catalogue, account.emailChangedTitle, account.emailChangedLead);
}
