import { LEVEL } from "../browser/acr";
import { type Ctx, paths, returnTarget } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { pageText } from "../browser/page-text";
import type { BrowserSession } from "../browser/session";
import { type AuthDemand, demandOf, judge, stepUpMethods, type Verdict } from "../browser/step-up";
import type { UserRow } from "../db/schema";
import type { InteractionRequest } from "../oauth2";
import { abilitiesOf } from "./reauth-proofs";
import { cannotMeetForm, type ReauthReason, reauthForm } from "./reauth-render";
import { reauthPasskeyScript } from "./reauth-script";
import { signInPage } from "./sign-in-pages";

/**
 * The re-authentication step of an authorization request: the browser's session is signed in but does not meet what the
 * request asks (`max_age`, `prompt=login`, `acr_values`: browser/step-up.ts). The same person confirms it is them with
 * what the step offers; a person with no way to meet the demand here is told so (and the client, if they go back, hears
 * `unmet_authentication_requirements`: OpenID Connect Unmet Authentication Requirements 1.0). A request whose sign-in
 * is too old, from a person with no password or passkey to confirm with (a magic-link or provider account), gets the
 * sign-in form again.
 */

export const userLabelOf = (user: UserRow) => user.email ?? user.phoneNumber ?? (user.displayName || user.id);

/** What the step says it is for: a passkey (phr), a confirmation of an old sign-in, or a second step. */
const reasonOf = (demand: AuthDemand, verdict: Verdict): ReauthReason =>
  demand.level === LEVEL.phr ? "passkey" : verdict === "stale" ? "fresh" : "stronger";

export async function reauthStep(
  c: Ctx,
  request: InteractionRequest,
  clientName: string,
  session: BrowserSession,
  options: { error?: string; status?: 400 | 401 | 429 } = {},
) {
  const deps = c.var.deps;
  const t = pageText(c, request.uiLocales, session.user.locale);
  const demand = demandOf(request, deps.now());
  const { user } = session;
  const verdict = judge(session.methods, demand);
  const abilities = await abilitiesOf(deps, user);
  const methods = stepUpMethods(session.methods, demand, abilities);
  const hidden = { request_id: request.id };
  const switchAccount = paths(c).switch;
  if (methods.length === 0) {
    // Nothing recent enough, and no password or passkey to confirm with (a magic-link or provider account): a whole
    // sign-in again, with all the page's ways (a provider then TOTP reaches mfa). Only a passkey ever reaches phr.
    const phrOutOfReach = demand.level === LEVEL.phr && !abilities.passkey;
    if (verdict === "stale" && !phrOutOfReach) {
      return signInPage(c, request, clientName, {
        intro: [t.signInAgain(clientName)],
        email: user.email ?? undefined,
        userLocale: user.locale,
      });
    }
    const reason = demand.level === LEVEL.phr ? "passkey" : "stronger";
    const body = cannotMeetForm({
      t,
      asker: clientName,
      reason,
      userLabel: userLabelOf(user),
      actions: { back: paths(c).reauthCancel, switchAccount },
      hidden,
    });
    return render(c, 403, t.cannotTitle, body, { t, redirectUri: request.redirectUri || undefined });
  }
  const body = reauthForm({
    t,
    asker: clientName,
    reason: reasonOf(demand, verdict),
    userLabel: userLabelOf(user),
    email: user.email ?? undefined,
    methods,
    actions: {
      password: paths(c).reauthPassword,
      totp: paths(c).reauthTotp,
      passkey: paths(c).reauthPasskey,
      switchAccount,
    },
    hidden,
    error: options.error,
  });
  const apiPath = deps.config.urls.authPath;
  return render(c, options.status ?? (options.error ? 401 : 200), t.reauthTitle, body, {
    t,
    redirectUri: returnTarget(request),
    ...(methods.includes("passkey") ? { script: reauthPasskeyScript(apiPath) } : {}),
  });
}
