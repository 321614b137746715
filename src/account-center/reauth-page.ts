import { html } from "hono/html";
import { LEVEL } from "../browser/acr";
import type { BrowserSession } from "../browser/session";
import { type AuthDemand, judge, stepUpMethods } from "../browser/step-up";
import type { Catalogue } from "../browser/text";
import { type abilitiesOf, reauthForm, reauthPasskeyScript } from "../pages";
import { accountPath, apiPath, type Ctx } from "./forms";
import { accountFrame, userLabelOf } from "./frame";
import { hiddenFields } from "./html";

/**
 * The re-authentication page of the account center: the OAuth2 page's own step (src/pages/reauth-render.ts)
 * with the account center's actions, for its demand (recent-auth.ts). A person with no method here that moves the
 * session toward it (a magic-link or provider account without a password, TOTP or passkey) signs in again; one whose
 * account cannot reach a passkey demand (the elevated claim, and no passkey) is told so.
 */

/** A demand of the account center (recent-auth.ts), and what the person can meet it with here. */
export interface Demanded {
  demand: AuthDemand;
  abilities: Awaited<ReturnType<typeof abilitiesOf>>;
}

/** Who asks, in the step's words ("<asker> asks you to confirm your sign-in"): the service, by its brand or host. */
const askerOf = (c: Ctx) => c.var.config.brand.name ?? new URL(c.var.config.urls.server).host;

export async function reauthPage(
  c: Ctx,
  session: BrowserSession,
  catalogue: Catalogue,
  input: {
    section: string;
    elevated: boolean;
    demanded: Demanded;
    status?: 200 | 400 | 401 | 429;
    error?: string;
  },
): Promise<Response> {
  const { account, pages } = catalogue;
  const { demand, abilities } = input.demanded;
  const methods = stepUpMethods(session.methods, demand, abilities);
  const hidden: Record<string, string> = {
    section: input.section,
    ...(input.elevated ? { elevated: "1" } : {}),
  };
  const frame = { session, catalogue, status: input.status ?? 200, title: pages.reauthTitle };
  if (methods.length === 0) {
    if (demand.level === LEVEL.phr && !abilities.passkey) {
      const body = html`<h1>${pages.reauthTitle}</h1>
<p class="lead">${account.reauthPasskeyNeeded}</p>
<p><a href="${accountPath(c)}#${input.section}">${account.backToAccount}</a></p>`;
      return accountFrame(c, { ...frame, status: 403, body });
    }
    const body = html`<h1>${pages.reauthTitle}</h1>
<p class="lead">${account.reauthSignInAgain}</p>
<form method="post" action="${accountPath(c, "/reauth/sign-in-again")}">
  ${hiddenFields(hidden)}
  <div class="actions"><button class="primary" type="submit">${account.signInAgain}</button></div>
</form>`;
    return accountFrame(c, { ...frame, body });
  }
  const verdict = judge(session.methods, demand);
  const body = reauthForm({
    t: pages,
    asker: askerOf(c),
    reason: demand.level === LEVEL.phr ? "passkey" : verdict === "stale" ? "fresh" : "stronger",
    userLabel: userLabelOf(session),
    email: session.user.email ?? undefined,
    methods,
    actions: {
      password: accountPath(c, "/reauth/password"),
      totp: accountPath(c, "/reauth/totp"),
      passkey: accountPath(c, "/reauth/passkey"),
      switchAccount: accountPath(c, "/sign-out"),
    },
    hidden,
    error: input.error,
  });
  return accountFrame(c, {
    ...frame,
    body,
    ...(methods.includes("passkey") ? { script: reauthPasskeyScript(apiPath(c)) } : {}),
  });
}
