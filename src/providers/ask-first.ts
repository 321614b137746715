import type { Context } from "hono";
import { html } from "hono/html";
import { findUserById } from "../auth";
import { render } from "../browser/page-response";
import { type PageText, pageText } from "../browser/page-text";
import { providerName } from "../browser/provider-names";
import { isSameOrigin } from "../browser/same-origin";
import type { AppEnv } from "../http/app-env";
import { browserBinding } from "../http/browser-binding";
import { operation, REDIRECT_ANSWER } from "../http/documented";
import { bodyText } from "../http/validation";
import { decrypt, encrypt, timingSafeEqualString } from "../lib/crypto";
import { type ProviderStart, REQUEST_LIFETIME_MS } from "./flow";

/**
 * The question a browser is asked before a provider flow that gives an account something of the person's provider
 * account: linking it as a way to sign in (the Nhost API's `connect=<access token>`, the Supabase face's
 * `linkIdentity` URL) or connecting it to the token vault (its start URL). Each of those starts from a URL that
 * carries the account's authority (a token, a ticket, a state) and nothing of the browser's.
 *
 * Threat: link CSRF. An attacker starts such a flow for their own account and gets a victim to open the URL. Bound
 * to the victim's browser, the flow goes to the provider, which signs the victim in without a question; the victim's
 * provider identity became a way into the attacker's account (the victim later signs in there and fills it), and
 * the victim's provider tokens were handed to the attacker. So the start does the flow's work (its request row,
 * bound to this browser) but shows this page instead of the redirect, naming the account; only a post of this page
 * from this origin, by the browser the flow is bound to, goes on to the provider. The provider's URL (its `state`)
 * travels sealed in the form: the page's source shows nothing an attacker could use, and no other page can post it.
 */

type Kind = "link" | "connection";

interface Sealed {
  purpose: "provider-ask";
  url: string;
  browser: string;
  exp: number;
}

/** The form field that carries the sealed way on. */
const FIELD = "continuation";

/**
 * The page: which account gets the provider account, a warning for a person who did not start this, and one button
 * that posts to `action` (a route that answers with `followAnswer`).
 */
export async function askFirst(
  c: Context<AppEnv>,
  input: {
    kind: Kind;
    provider: string;
    userId: string;
    /** The provider's authorization URL the flow goes on to. */
    url: string;
    /** Where the flow lands in the end (the app), which the form's redirect chain may reach. */
    returnTo: string;
    /** The hash of this browser's `provider-flow` binding, which the flow's request is bound to. */
    browserHash: string;
    action: string;
  },
): Promise<Response> {
  const { deps, config } = c.var;
  const user = await findUserById(deps.shards, input.userId);
  // The browser's languages, not the account's: the account may be an attacker's, choosing words the victim cannot read.
  const t = pageText(c);
  const name = providerName(input.provider, config.providers.enabled);
  const sealed: Sealed = {
    purpose: "provider-ask",
    url: input.url,
    browser: input.browserHash,
    exp: deps.now() + REQUEST_LIFETIME_MS,
  };
  const continuation = await encrypt(config.secrets.encryptionKey, JSON.stringify(sealed));
  // Named only by what its owner proved: an unconfirmed address is anyone's to set (a guest deanonymized to the
  // victim's own address would be named by it), and a display name is its owner's choice (the victim's name).
  const account =
    user?.emailVerified && user.email
      ? user.email
      : user?.phoneNumberVerified && user.phoneNumber
        ? user.phoneNumber
        : null;
  const title = input.kind === "link" ? t.linkTitle(name) : t.connectTitle(name);
  const lead = input.kind === "link" ? t.linkLead(name) : t.connectLead(name);
  c.header("Cache-Control", "no-store");
  return render(
    c,
    200,
    title,
    html`<h1>${title}</h1>
<p class="lead">${lead}</p>
<p class="binding" id="ask-account">${account === null ? t.askUnconfirmedAccount : html`<strong>${account}</strong>`}</p>
<p class="warning">${t.askWarning(name)}</p>
<form method="post" action="${input.action}">
  <input type="hidden" name="${FIELD}" value="${continuation}">
  <div class="actions"><button id="ask-continue" class="primary" type="submit">${t.askContinue(name)}</button></div>
</form>`,
    // Browsers hold a form's whole redirect chain to `form-action`: a provider that asks nothing (the person said yes
    // to the app before) sends the browser straight on to the callback here and from there to the app.
    { t, providerOrigins: [new URL(input.url).origin], redirectUri: input.returnTo },
  );
}

/** A started provider flow: a sign-in goes straight on; a link asks first, its form posting to `action`. */
export function goOrAsk(
  c: Context<AppEnv>,
  provider: string,
  started: ProviderStart,
  browserHash: string,
  action: string,
): Response | Promise<Response> {
  if (started.linkTo === null) return c.redirect(started.url, 302);
  const { url, returnTo, linkTo: userId } = started;
  return askFirst(c, { kind: "link", provider, userId, url, returnTo, browserHash, action });
}

/** The document of a route that answers the question (`followAnswer`). */
export const answerOperation = (summary: string, description: string) =>
  operation({
    summary,
    description: `${description} Posted from another site: 403; by another browser, or after ten minutes: 400. Both are pages, and nothing is linked or connected.`,
    answers: {
      303: REDIRECT_ANSWER("To the provider's authorization page."),
      400: { description: "Expired, or not this browser's question.", media: "html" },
      403: { description: "Posted from another site.", media: "html" },
    },
  });

/**
 * The page's post: from this origin (a cross-site form is the CSRF itself), by the browser the flow is bound to
 * (another browser's post of a copied form goes nowhere), within the request's ten minutes; then on to the provider.
 */
export async function followAnswer(c: Context<AppEnv>): Promise<Response> {
  c.header("Cache-Control", "no-store");
  const t = pageText(c);
  if (!isSameOrigin(c)) return refuse(c, t, 403, t.errors.otherSite);
  const value = new URLSearchParams(await bodyText(c)).get(FIELD);
  const sealed = value && value.length <= 16_384 ? await open(c, value) : null;
  const browser = await browserBinding(c, "provider-flow");
  if (!sealed || !browser || !timingSafeEqualString(sealed.browser, browser)) {
    return refuse(c, t, 400, t.errors.askExpired);
  }
  return c.redirect(sealed.url, 303);
}

async function open(c: Context<AppEnv>, value: string): Promise<Sealed | null> {
  try {
    const sealed = JSON.parse(await decrypt(c.var.config.secrets.encryptionKey, value)) as Sealed;
    if (sealed.purpose !== "provider-ask" || !(sealed.exp > c.var.deps.now())) return null;
    return typeof sealed.url === "string" && typeof sealed.browser === "string" ? sealed : null;
  } catch {
    return null;
  }
}

function refuse(c: Context<AppEnv>, t: PageText, status: 400 | 403, message: string) {
  return render(
    c,
    status,
    t.askProblemTitle,
    html`<h1>${t.askProblemTitle}</h1>
<p class="lead">${message}</p>`,
    { t },
  );
}
