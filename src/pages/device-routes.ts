import { Hono } from "hono";
import { backToPage, type Ctx, paths } from "../browser/page-paths";
import { render, showProblem } from "../browser/page-response";
import { pageText } from "../browser/page-text";
import { isSameOrigin } from "../browser/same-origin";
import type { AppEnv } from "../http/app-env";
import { findUserCode, interactionParams, shownUserCode } from "../oauth2";
import { countGuess } from "../rate-limits/buckets";
import { addressKey } from "../rate-limits/client-address";
import { deviceCodeForm, deviceFinished } from "./render-consent";

/**
 * The device flow's page (RFC 8628 §3.3, contract §3.6): the person types the code their device shows; a right code
 * becomes a page request that goes through sign-in and consent like any other (the consent screen shows the code
 * again, and is never skipped: a code someone else sent you is the device flow's phishing, RFC 8628 §5.4). Wrong
 * codes are counted per address in `BRUTE_FORCE`; past the limit even a right one is refused for a while.
 */

const codeForm = (c: Ctx, status: 200 | 400 | 429, userCode?: string, error?: string) => {
  const t = pageText(c);
  return render(c, status, t.deviceTitle, deviceCodeForm({ t, action: paths(c).device, userCode, error }), {
    t,
  });
};

/** The code of `verification_uri_complete`, shown in the form for the person to confirm, never submitted for them. */
const prefilled = (value: string | undefined) => (value ? shownUserCode(value) : undefined);

export function devicePageRoutes(loginUrl: string | undefined) {
  return new Hono<AppEnv>()
    .get("/", (c) =>
      // Where an external login UI sends the person after approving (src/oauth2/interaction.ts).
      c.req.query("result") === "approved"
        ? render(c, 200, pageText(c).deviceConnected, deviceFinished(pageText(c), "approved"), {
            t: pageText(c),
          })
        : codeForm(c, 200, prefilled(c.req.query("user_code"))),
    )
    .post("/", async (c) => {
      if (!isSameOrigin(c)) return showProblem(c, (t) => t.errors.otherSite, 403);
      const read = await interactionParams(c);
      if ("unreadable" in read) return codeForm(c, 400, undefined, read.unreadable);
      const typed = (read.params.get("user_code") ?? "").slice(0, 20);
      const deps = c.var.deps;
      const found = await findUserCode(deps, typed);
      const wait = await countGuess(
        c.env,
        deps.config.rateLimits,
        "device-user-codes",
        addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
        found !== undefined,
        deps.now(),
      );
      if (wait !== null) return codeForm(c, 429, typed, pageText(c).errors.tooManyCodes(wait));
      if (!found) return codeForm(c, 400, typed, pageText(c).errors.deviceCodeWrong);
      const requestId = await found.open();
      if (!loginUrl) return backToPage(c, requestId);
      const ui = new URL(loginUrl);
      ui.searchParams.set("request_id", requestId);
      return c.redirect(ui.toString(), 303);
    });
}
