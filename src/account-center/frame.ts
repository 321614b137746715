import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { render } from "../browser/page-response";
import type { BrowserSession } from "../browser/session";
import type { Catalogue } from "../browser/text";
import { accountPath, type Ctx } from "./forms";
import { READ_ONLY_STYLE, readOnlyWhileImpersonating } from "./read-only";
// Leaf files of the security sections (no import back here): their CSS and the origins their forms may end at.
import { securityFormTargets } from "./security/form-targets";
import { SECURITY_STYLE } from "./security/style";
import { ACCOUNT_STYLE } from "./style";

/**
 * The account center's frame, inside the built-in pages' house (`render`: strict CSP, nonce'd style, the brand): a
 * header with who is signed in and a sign-out, then either the navigation of the sections (the main page) or a way
 * back to it (a step of its own: a re-authentication, a token shown once).
 */

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface NavItem {
  id: string;
  label: string;
}

export interface FrameInput {
  session: BrowserSession;
  catalogue: Catalogue;
  status?: 200 | 400 | 401 | 403 | 404 | 429;
  title: string;
  body: Body;
  /** Our own script, run with the page's nonce (a passkey ceremony). */
  script?: string;
  /** The main page's sections; a step without them links back to the page. */
  nav?: NavItem[];
  /** Said at the top, once (after a form post: "saved"). */
  notice?: string;
}

export const userLabelOf = (session: BrowserSession) =>
  session.user.email ?? session.user.phoneNumber ?? (session.user.displayName || session.user.id);

const header = (c: Ctx, input: FrameInput) => {
  const { account } = input.catalogue;
  return html`<header class="account-header">
  ${input.nav ? html`<h1 class="account-title">${account.title}</h1>` : html`<p class="account-title">${account.title}</p>`}
  <div class="account-who">
    <span>${account.signedInAs(userLabelOf(input.session))}</span>
    <form method="post" action="${accountPath(c, "/sign-out")}"><button class="link-button" type="submit">${account.signOut}</button></form>
  </div>
</header>`;
};

const navigation = (c: Ctx, input: FrameInput) => {
  const { account } = input.catalogue;
  if (!input.nav)
    return html`<p class="account-back"><a href="${accountPath(c)}">${account.backToAccount}</a></p>`;
  return html`<nav class="account-nav" aria-label="${account.sectionsLabel}"><ul>
${input.nav.map((item) => html`<li><a href="#${item.id}">${item.label}</a></li>`)}
</ul></nav>`;
};

export function accountFrame(c: Ctx, input: FrameInput): Promise<Response> {
  const body = html`${header(c, input)}
${navigation(c, input)}
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ""}
<div class="account-body">${readOnlyWhileImpersonating(input.session, input.catalogue, input.body)}</div>`;
  return render(c, input.status ?? 200, input.title, body, {
    t: input.catalogue.pages,
    style: `${ACCOUNT_STYLE}${SECURITY_STYLE}${READ_ONLY_STYLE}`,
    // "Link another account" posts here and goes on to the provider: browsers hold the redirect chain to form-action.
    providerOrigins: securityFormTargets(c),
    ...(input.script ? { script: input.script } : {}),
  });
}
