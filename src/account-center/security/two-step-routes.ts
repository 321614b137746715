import { Hono } from "hono";
import { html } from "hono/html";
import { changeMfa, createRecoveryCodes, issueRecoveryCodes, startTotpSetup } from "../../auth";
import { raiseBrowserSession } from "../../browser/session";
import type { AppEnv } from "../../http/app-env";
import { backToAccount, type Ctx, type Posted, type Signed } from "../forms";
import { errorBox } from "../html";
import { attempt, codeOf, confirmedPost, securityStep } from "./steps";
import { codeForm, codesBody, confirmForm, setupBody, TWO_STEP } from "./two-step";

/**
 * The two-step section's form posts. Each goes through the API's own functions (src/auth/mfa: the same secret
 * storage, the same per-user guess cap on codes, the same audit events), after the account center's checks: a
 * same-origin post of a signed-in browser (forms.ts) and a recent confirmation (recent-auth.ts).
 * Threats: a cross-site post turning a second factor on or off (refused before anything runs); a borrowed, signed-in
 * browser turning TOTP off (a recent confirmation AND a current code or recovery code); guessing codes through the
 * page instead of the API (the same guard counts both); the secret or the codes left in a cache (`no-store`).
 */

/** A step with one code form, after a refusal: the reason, and the form again. */
const codeStep = (
  c: Ctx,
  signed: Signed,
  title: string,
  form: Parameters<typeof codeForm>[1],
  status: 400 | 429,
) => securityStep(c, signed, { title, status, body: html`<h1>${title}</h1>${codeForm(c, form)}` });

/**
 * A change that needs a current code as well as a recent confirmation (as the API asks): the work's result, or the
 * code form again with the reason (no code, a wrong one, too many).
 */
async function withCurrentCode<T>(
  c: Ctx,
  posted: Posted,
  title: string,
  form: Parameters<typeof codeForm>[1],
  work: (code: string) => Promise<T>,
) {
  const again = (words: string, status: 400 | 429) =>
    codeStep(c, posted, title, { ...form, error: words }, status);
  const code = codeOf(posted.params);
  if (!code) return { answer: again(posted.catalogue.accountSecurity.errors.wrongCode, 400) };
  return attempt(posted, () => work(code), again);
}

export const twoStepRoutes = new Hono<AppEnv>()
  .post("/security/totp/start", async (c) => {
    const posted = await confirmedPost(c, TWO_STEP);
    if ("answer" in posted) return posted.answer;
    const w = posted.catalogue.accountSecurity.twoStep;
    // A new secret replaces one generated before and never confirmed; an active one is refused (`totp-already-active`).
    const result = await attempt(
      posted,
      () => startTotpSetup(c.var.deps, posted.session.user.id),
      (words) =>
        securityStep(c, posted, {
          title: w.setUpTitle,
          status: 400,
          body: html`<h1>${w.setUpTitle}</h1>${errorBox(words)}`,
        }),
    );
    if ("answer" in result) return result.answer;
    return securityStep(c, posted, {
      title: w.setUpTitle,
      body: setupBody(c, posted, result.value),
      secret: true,
    });
  })
  .post("/security/totp/confirm", async (c) => {
    const posted = await confirmedPost(c, TWO_STEP);
    if ("answer" in posted) return posted.answer;
    const w = posted.catalogue.accountSecurity.twoStep;
    const userId = posted.session.user.id;
    const code = codeOf(posted.params);
    const again = (words: string, status: 400 | 429) =>
      securityStep(c, posted, {
        title: w.setUpTitle,
        status,
        body: html`<h1>${w.setUpTitle}</h1>${confirmForm(c, posted, words)}`,
      });
    if (!code) return again(posted.catalogue.accountSecurity.errors.wrongCode, 400);
    const result = await attempt(
      posted,
      () => changeMfa(c.var.deps, userId, { code, activeMfaType: "totp" }),
      again,
    );
    if ("answer" in result) return result.answer;
    // The code just accepted (the API's own check, for this user) is the second factor performed now: it counts for
    // this browser like a re-authentication by TOTP would, or every change from here on would ask for it again at once.
    await raiseBrowserSession(c, posted.session, "totp");
    // Its time step is spent too: the first recovery codes come now, without asking the person to wait for the next.
    const codes = await issueRecoveryCodes(c.var.deps, userId);
    return securityStep(c, posted, {
      title: w.codesTitle,
      body: codesBody(c, posted, codes, "security-totp-enabled"),
      secret: true,
    });
  })
  .post("/security/totp/disable", async (c) => {
    const posted = await confirmedPost(c, TWO_STEP);
    if ("answer" in posted) return posted.answer;
    const w = posted.catalogue.accountSecurity.twoStep;
    const form = {
      action: "/security/totp/disable",
      id: "totp-off-code",
      lead: w.turnOffLead,
      label: w.codeOrRecovery,
      button: w.turnOff,
    };
    const result = await withCurrentCode(c, posted, w.turnOff, form, (code) =>
      changeMfa(c.var.deps, posted.session.user.id, { code, activeMfaType: "" }),
    );
    if ("answer" in result) return result.answer;
    return backToAccount(c, TWO_STEP, "security-totp-disabled");
  })
  .post("/security/recovery-codes", async (c) => {
    const posted = await confirmedPost(c, TWO_STEP);
    if ("answer" in posted) return posted.answer;
    const w = posted.catalogue.accountSecurity.twoStep;
    const form = {
      action: "/security/recovery-codes",
      id: "totp-codes-code",
      lead: w.newCodesLead,
      label: w.code,
      button: w.newCodes,
    };
    const result = await withCurrentCode(c, posted, w.newCodes, form, (code) =>
      createRecoveryCodes(c.var.deps, posted.session.user.id, code),
    );
    if ("answer" in result) return result.answer;
    return securityStep(c, posted, {
      title: w.codesTitle,
      body: codesBody(c, posted, result.value),
      secret: true,
    });
  });
