import { html } from "hono/html";
import {
  deviceNameOf,
  IMPORTED_NHOST_METHOD,
  listUserSessions,
  revokeOtherUserSessions,
  revokeUserSession,
  type UserSession,
} from "../auth";
import { endBrowserSession } from "../browser/session";
import type { Catalogue } from "../browser/text";
import { AppError } from "../errors";
import { providerName } from "../pages";
import {
  accountPath,
  backToAccount,
  type Ctx,
  field,
  type Outcome,
  type Posted,
  type SectionView,
} from "./forms";
import { errorBox, timeOf } from "./html";
import { signedOutPage } from "./sign-out";

/**
 * Devices: the user's sessions (src/auth/sessions/user-sessions.ts, the same list as `GET /user/sessions`), this
 * browser's marked, each with a "sign out"; and "sign out all other devices". Ending a session deletes its row and
 * revokes its token family at once: its next refresh fails (src/auth/revocation.ts). The user is the browser
 * session's, never a field of the form: another user's session id is "no such session", like an unknown one.
 */

export const SESSIONS = "sessions";

/**
 * The browser and system the User-Agent names, in the words of the new-device mail ("Chrome on macOS"). A session
 * carried from Nhost has no User-Agent (Nhost kept none): it says where it came from, not "unknown device".
 */
function deviceOf(catalogue: Catalogue, userAgent: string | null, method: string | null): string {
  if (!userAgent && method === IMPORTED_NHOST_METHOD) return catalogue.account.sessions.methods.importedNhost;
  const name = deviceNameOf(userAgent);
  if (!name.browser) return name.system ?? catalogue.account.sessions.unknownDevice;
  return name.system ? catalogue.devices.device(name.browser, name.system) : name.browser;
}

/** How the session began (its `method`, src/auth/sign-in/method.ts), in words. */
function methodInWords(
  catalogue: Catalogue,
  method: string | null,
  actor?: string | null,
  /** The switched-on providers: a custom one is named as its configuration says. */
  providers?: Parameters<typeof providerName>[1],
): string {
  // An impersonation shows who acted (contract operators.md §1): the person must be able to tell it from their own.
  if (actor) return catalogue.impersonation.sessionLabel(actor);
  const words = catalogue.account.sessions.methods;
  if (method?.startsWith("provider:"))
    return words.provider(providerName(method.slice("provider:".length), providers));
  const known: Record<string, string> = {
    "email-password": words.password,
    webauthn: words.passkey,
    "webauthn-upgrade": words.passkey,
    "email-link": words.emailLink,
    "pkce-link": words.emailLink,
    "email-otp": words.emailCode,
    "sms-otp": words.smsCode,
    "mfa-totp": words.authenticator,
    pat: words.accessToken,
    anonymous: words.anonymous,
    "id-token": words.identityProvider,
    "sso:saml": words.identityProvider,
    "sso:oidc": words.identityProvider,
    "oauth2-page": words.signInPage,
    "hosted-page": words.signInPage,
    admin: words.administrator,
    [IMPORTED_NHOST_METHOD]: words.importedNhost,
  };
  return (method && known[method]) || catalogue.account.unknown;
}

function sessionRow(c: Ctx, view: SectionView, session: UserSession) {
  const { catalogue } = view;
  const words = catalogue.account.sessions;
  const language = catalogue.pages.lang;
  const place = session.place ?? session.ip ?? catalogue.account.unknown;
  return html`<tr>
  <td data-label="${words.device}"><span>${deviceOf(catalogue, session.userAgent, session.method)}${session.current ? html`<span class="badge ok">${words.thisDevice}</span>` : ""}</span></td>
  <td data-label="${words.place}"><span>${place}</span></td>
  <td data-label="${words.method}"><span>${methodInWords(catalogue, session.method, session.impersonatedBy, c.var.config.providers.enabled)}</span></td>
  <td data-label="${words.lastUsed}"><span>${timeOf(Date.parse(session.lastUsedAt), language)}</span></td>
  <td data-label="${words.signedIn}"><span>${timeOf(Date.parse(session.createdAt), language)}</span></td>
  <td class="row-action">${
    session.current
      ? ""
      : html`<form method="post" action="${accountPath(c, "/sessions/revoke")}"><input type="hidden" name="sessionId" value="${session.id}"><button type="submit">${words.revoke}</button></form>`
  }</td>
</tr>`;
}

export async function sessionsSection(c: Ctx, view: SectionView) {
  const words = view.catalogue.account.sessions;
  const list = await listUserSessions(c.var.deps, view.session.user.id, view.session.sessionId);
  const others = list.some((session) => !session.current);
  return html`<section id="${SESSIONS}" class="card">
<h2>${words.title}</h2>
<p class="lead">${words.lead}</p>
${errorBox(view.error)}
<table class="list">
  <thead><tr><th scope="col">${words.device}</th><th scope="col">${words.place}</th><th scope="col">${words.method}</th><th scope="col">${words.lastUsed}</th><th scope="col">${words.signedIn}</th><th scope="col"><span class="muted">${words.revoke}</span></th></tr></thead>
  <tbody>${list.map((session) => sessionRow(c, view, session))}</tbody>
</table>
${
  others
    ? html`<form method="post" action="${accountPath(c, "/sessions/revoke-others")}"><div class="actions"><button type="submit">${words.revokeOthers}</button></div></form>`
    : html`<p class="muted">${words.noOthers}</p>`
}
</section>`;
}

export async function revokeSession(c: Ctx, posted: Posted): Promise<Outcome> {
  const { session } = posted;
  const sessionId = field(posted.params, "sessionId", 100);
  try {
    await revokeUserSession(c.var.deps, session.user.id, sessionId);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "not-found") throw error;
    return { section: SESSIONS, error: posted.catalogue.account.errors.unknownSession, status: 404 };
  }
  // This browser's own session, named by hand: it is signed out like the header's button does.
  if (sessionId === session.sessionId) {
    endBrowserSession(c);
    return signedOutPage(c, posted.catalogue);
  }
  return backToAccount(c, SESSIONS, "session-revoked");
}

export async function revokeOthers(c: Ctx, posted: Posted): Promise<Outcome> {
  await revokeOtherUserSessions(c.var.deps, posted.session.user.id, posted.session.sessionId);
  return backToAccount(c, SESSIONS, "others-revoked");
}
