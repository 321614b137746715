import type { Ctx } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { catalogueFor } from "../browser/page-text";
import { problem } from "../browser/render";
import type { Hosted } from "../browser/text/en/hosted";
import { brandOf } from "../http/brand";
import type { InteractionRequest } from "../oauth2";

/** What the page says for a first-party app's request (contract §13): whom it signs in for, and its problems. */

/**
 * The name the page gives the app: the deployment's brand name (the console's, else `AUTH_BRAND_NAME`), else the host
 * the person goes back to (a custom scheme's name for an app link such as `myapp://callback`).
 */
export async function appName(c: Ctx, redirectTo: string): Promise<string> {
  const { name } = await brandOf(c.var.deps, c.var.requestId);
  if (name) return name;
  const url = new URL(redirectTo);
  return url.host || url.protocol.replace(/:$/, "");
}

/**
 * The sentence the sign-in and sign-up views say instead of "to continue to <client>", for an app's request (`name`:
 * `appName`'s, which stands where a client's name would); undefined for any other request (a client's, an
 * invitation's), whose views say what they always did.
 */
export function hostedIntro(
  c: Ctx,
  request: InteractionRequest,
  name: string,
  view: "sign-in" | "sign-up",
  userLocale?: string | null,
): string[] | undefined {
  if (!request.app) return undefined;
  const words = catalogueFor(c, request.uiLocales, userLocale).hosted;
  if (request.app.accountCenter) {
    return [view === "sign-in" ? words.accountSignInLead : words.accountSignUpLead];
  }
  return [view === "sign-in" ? words.signInLead(name) : words.signUpLead(name)];
}

/** A problem of an app's sign-in, in the person's language: a page, since a person's browser reads it. */
export function hostedProblem(
  c: Ctx,
  uiLocales: readonly string[],
  message: (words: Hosted) => string,
  status: 400 = 400,
) {
  const catalogue = catalogueFor(c, uiLocales);
  const t = catalogue.pages;
  return render(c, status, t.problemTitle, problem(t, message(catalogue.hosted)), { t });
}
