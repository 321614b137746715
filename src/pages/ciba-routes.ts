import { Hono } from "hono";
import { html } from "hono/html";
import { backToPage, type Ctx, paths } from "../browser/page-paths";
import { render, showProblem, UNKNOWN_REQUEST } from "../browser/page-response";
import { catalogueFor } from "../browser/page-text";
import { hidden } from "../browser/render";
import type { BrowserSession } from "../browser/session";
import type { AppEnv } from "../http/app-env";
import { type InteractionRequest, openCibaApproval } from "../oauth2";
import { cibaApproved } from "./render-consent";

/**
 * The approval page of an OpenID CIBA request (contract operators.md §2), the link of its mail and of the account
 * center's "waiting for you": it opens the request's page request and goes on to the login and consent page, which
 * asks the user the request names to sign in (and to step up, when it asked `acr_values`), then shows the client's
 * binding message and Approve / Deny. A GET decides nothing: a mail scanner that follows the link approves nothing.
 */
export function cibaPageRoutes(loginUrl: string | undefined) {
  return new Hono<AppEnv>().get("/", async (c) => {
    if (c.req.query("result") === "approved") {
      // Where an external login UI sends the person after approving (oauth2 interaction.ts).
      const catalogue = catalogueFor(c);
      return render(c, 200, catalogue.ciba.approvedTitle, cibaApproved(catalogue.ciba), {
        t: catalogue.pages,
      });
    }
    const requestId = await openCibaApproval(c.var.deps, (c.req.query("request") ?? "").slice(0, 100));
    // Decided, expired, or never made: the page says so, as for any request it does not know.
    if (!requestId) return showProblem(c, UNKNOWN_REQUEST);
    if (!loginUrl) return backToPage(c, requestId);
    const ui = new URL(loginUrl);
    ui.searchParams.set("request_id", requestId);
    return c.redirect(ui.toString(), 303);
  });
}

/** Someone other than the user a CIBA request asks is signed in here: they may sign in as that user instead. */
export function cibaOtherAccount(c: Ctx, request: InteractionRequest, session: BrowserSession) {
  const catalogue = catalogueFor(c, request.uiLocales, session.user.locale);
  const words = catalogue.ciba;
  const body = html`<h1>${words.otherAccountTitle}</h1>
<p class="lead">${words.otherAccountLead}</p>
<form method="post" action="${paths(c).switch}">${hidden(request.id)}<div class="actions"><button class="primary" type="submit">${catalogue.pages.useAnotherAccount}</button></div></form>`;
  return render(c, 403, words.otherAccountTitle, body, { t: catalogue.pages });
}
