import { Hono } from "hono";
import { html } from "hono/html";
import { chooseSecondStep, dropSecondStepChoice, factorsOf, listSecurityKeys } from "../../auth";
import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { accountPath, backToAccount, type Ctx, field, type Signed } from "../forms";
import { errorBox } from "../html";
import { attempt, confirmedPost, confirmLink, securityStep } from "./steps";

/**
 * The choice of second step (issue 47): what a sign-in with the password asks for next, beyond the TOTP of the
 * two-step section: a code mailed to the verified address, a passkey or security key, a texted code (a phone factor
 * added through the Supabase API), or nothing. A plain HTML form (radio buttons, no script), posted to
 * `/security/second-step`, through the API's own functions (src/auth/mfa/mfa-choice.ts).
 * Threats: a cross-site post choosing for the person (refused by the account center's post checks); a borrowed,
 * signed-in browser dropping the step (a recent confirmation first, as every change here); a choice of something the
 * person does not hold, or an unverified address (refused by the API's rules, said in the page's words).
 */

export const SECOND_STEP = "second-step";

const CHOICES = ["email", "webauthn", "sms", "off"] as const;
type Choice = (typeof CHOICES)[number];

/** What the person can choose: an address only when verified, a key only when they have one, a phone when verified. */
interface Holdings {
  emailVerified: boolean;
  hasKey: boolean;
  hasPhone: boolean;
}

async function holdingsOf(c: Ctx, user: UserRow, keyCount?: number): Promise<Holdings> {
  const { deps } = c.var;
  const [factors, keys] = await Promise.all([
    factorsOf(deps, user),
    keyCount ?? listSecurityKeys(deps.shards.ofUser(user.id), user.id).then((list) => list.length),
  ]);
  const verified = (type: string) => factors.some((f) => f.type === type && f.status === "verified");
  return {
    emailVerified: Boolean(user.email && user.emailVerified),
    hasKey: keys > 0 || verified("webauthn"),
    hasPhone: verified("phone"),
  };
}

const currentOf = (active: string | null): Choice =>
  active === "email" ? "email" : active === "webauthn" ? "webauthn" : active === "sms" ? "sms" : "off";

/** The section: the current step, and the form (or the link to confirm first, or TOTP's word). */
export async function secondStepSection(c: Ctx, signed: Signed, keyCount: number, recent: boolean) {
  const w = signed.catalogue.secondStep;
  const user = signed.session.user;
  const names: Record<Choice, string> = {
    email: w.email(user.email ?? ""),
    webauthn: w.passkey,
    sms: w.sms,
    off: w.none,
  };
  const totp = user.activeMfaType === "totp";
  const state = w.current(totp ? w.totp : names[currentOf(user.activeMfaType)]);
  const body = !c.var.config.mfa.enabled
    ? html`<p class="hint">${signed.catalogue.accountSecurity.twoStep.unavailable}</p>`
    : totp
      ? html`<p class="hint">${w.totpFirst}</p>`
      : !recent
        ? confirmLink(c, signed, SECOND_STEP)
        : choiceForm(c, signed, await holdingsOf(c, user, keyCount));
  return html`<section id="${SECOND_STEP}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
<p class="security-state"><strong>${state}</strong></p>
${body}
</section>`;
}

function choiceForm(c: Ctx, signed: Signed, holds: Holdings, error?: string) {
  const w = signed.catalogue.secondStep;
  const user = signed.session.user;
  const current = currentOf(user.activeMfaType);
  const option = (value: Choice, label: string, available: boolean, hint?: string) =>
    html`<div class="choice">
    <input type="radio" id="second-step-${value}" name="choice" value="${value}"${current === value ? html` checked` : ""}${available ? "" : html` disabled`}>
    <label for="second-step-${value}">${label}</label>${hint && !available ? html` <span class="hint">${hint}</span>` : ""}
  </div>`;
  return html`<form class="security-form" method="post" action="${accountPath(c, "/security/second-step")}">
  ${errorBox(error)}
  <fieldset class="second-step-choices">
    <legend>${w.title}</legend>
    ${option("email", w.email(user.email ?? ""), holds.emailVerified, w.emailUnverified)}
    ${option("webauthn", w.passkey, holds.hasKey, w.noPasskey)}
    ${holds.hasPhone ? option("sms", w.sms, true) : ""}
    ${option("off", w.off, true)}
  </fieldset>
  <button class="primary" type="submit">${w.save}</button>
</form>`;
}

/** A refusal of the API in the section's words (the common ones are the security sections', steps.ts). */
function refusalWords(signed: Signed, error: unknown): string | undefined {
  const w = signed.catalogue.secondStep.errors;
  if (!(error instanceof AppError)) return undefined;
  if (error.code === "unverified-user") return w.unverified;
  if (error.code === "mfa-type-not-found") return w.missing;
  return undefined;
}

export const secondStepRoutes = new Hono<AppEnv>().post("/security/second-step", async (c) => {
  const posted = await confirmedPost(c, SECOND_STEP);
  if ("answer" in posted) return posted.answer;
  const choice = field(posted.params, "choice", 16) as Choice;
  const caller = { sub: posted.session.user.id, confirmed: true };
  const deps = c.var.deps;
  const again = async (words: string, status: 400 | 429) => {
    const holds = await holdingsOf(c, posted.session.user);
    return securityStep(c, posted, {
      title: posted.catalogue.secondStep.title,
      status,
      body: html`<h1>${posted.catalogue.secondStep.title}</h1>${choiceForm(c, posted, holds, words)}`,
    });
  };
  if (!CHOICES.includes(choice)) return again(posted.catalogue.secondStep.errors.missing, 400);
  const result = await attempt(
    posted,
    async () => {
      if (choice !== "off") return chooseSecondStep(deps, caller, choice);
      await dropSecondStepChoice(deps, caller);
    },
    again,
    (error) => refusalWords(posted, error),
  );
  if ("answer" in result) return result.answer;
  return backToAccount(c, SECOND_STEP, "security-second-step-changed");
});
