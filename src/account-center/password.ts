import { html } from "hono/html";
import { changeUserPassword } from "../auth";
import { AppError, RateLimitedError } from "../errors";
import { passwordField } from "../http/fields";
import { accountPath, backToAccount, type Ctx, type Outcome, type Posted, type SectionView } from "./forms";
import { errorBox } from "./html";
import { confirmHref, isRecentAuth, requireRecentAuth } from "./recent-auth";

/**
 * Password: change it, or set one on an account that signs in without (a magic link, a provider, a passkey). The
 * API's own change (`changeUserPassword`, contract §3.4 and §13): the policy (length, breached passwords), outstanding
 * links and PATs end, and the other sessions end unless the person unticks "sign out my other devices"; this
 * browser's session stays. Re-authentication first, as strong as the API's elevated claim asks for the same operation.
 */

export const PASSWORD = "password";

/** The password change is an E operation of the API (contract §6): the same demand here. */
const GATE = { elevated: true } as const;

export async function passwordSection(c: Ctx, view: SectionView) {
  const { account } = view.catalogue;
  const words = account.password;
  const hasPassword = view.session.user.passwordHash !== null;
  const min = c.var.config.password.minLength;
  const recent = await isRecentAuth(c, view.session, GATE);
  return html`<section id="${PASSWORD}" class="card">
<h2>${words.title}</h2>
<p class="lead">${hasPassword ? words.lead : words.noneYet}</p>
${errorBox(view.error)}
${
  recent
    ? html`<form method="post" action="${accountPath(c, "/password")}">
  <input type="hidden" name="username" autocomplete="username" value="${view.session.user.email ?? ""}">
  <label for="newPassword">${words.newPassword}</label>
  <input id="newPassword" name="newPassword" type="password" autocomplete="new-password" required minlength="${min}" maxlength="50" aria-describedby="newPassword-hint">
  <p id="newPassword-hint" class="hint">${words.hint(min)}</p>
  <label class="check"><input type="checkbox" name="signOutOthers" value="true" checked> ${words.signOutOthers}</label>
  <div class="actions"><button class="primary" type="submit">${hasPassword ? words.change : words.set}</button></div>
</form>`
    : html`<p><a href="${confirmHref(c, PASSWORD, GATE)}">${account.confirmFirst}</a></p>`
}
</section>`;
}

export async function changePassword(c: Ctx, posted: Posted): Promise<Outcome> {
  const gate = await requireRecentAuth(c, posted.session, PASSWORD, GATE);
  if (gate) return gate;
  const { errors } = posted.catalogue.account;
  const refuse = (error: string, status: 400 | 429 = 400): Outcome => ({ section: PASSWORD, error, status });
  // Not trimmed: spaces are part of a password.
  const newPassword = (posted.params.get("newPassword") ?? "").slice(0, 256);
  // An unticked checkbox is absent from the post: only a ticked one keeps the default of signing the others out.
  const signOutOthers = posted.params.get("signOutOthers") === "true";
  if (!passwordField.safeParse(newPassword).success) {
    return refuse(newPassword.length > 50 ? errors.passwordTooLong : errors.passwordTooShort(minOf(c)));
  }
  try {
    await changeUserPassword(
      c.var.deps,
      { newPassword, signOutOthers },
      { sub: posted.session.user.id, sid: posted.session.sessionId },
    );
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    if (error instanceof RateLimitedError)
      return refuse(errors.tooManyAttempts(error.retryAfterSeconds), 429);
    if (error.code === "password-too-short") return refuse(errors.passwordTooShort(minOf(c)));
    if (error.code === "password-in-hibp-database") return refuse(errors.passwordBreached);
    return refuse(errors.failed);
  }
  return backToAccount(c, PASSWORD, signOutOthers ? "password-changed-others-out" : "password-changed");
}

const minOf = (c: Ctx) => c.var.config.password.minLength;
