import { html } from "hono/html";
import { changeUserEmail } from "../auth";
import { rateLimited } from "../browser/checks";
import { AppError, RateLimitedError } from "../errors";
import { emailField } from "../http/fields";
import { signOwnRedirect } from "../lib/redirect";
import {
  accountPath,
  accountUrl,
  backToAccount,
  type Ctx,
  field,
  type Outcome,
  type Posted,
  type SectionView,
} from "./forms";
import { errorBox } from "./html";
import { confirmHref, isRecentAuth, requireRecentAuth } from "./recent-auth";

/**
 * Email: the address and whether it is confirmed; a change goes through the API's own flow (`changeUserEmail`,
 * contract §3.4): a link to the NEW address, and the address changes only when it is followed, which ends every
 * session (the account's recovery channel changed). Re-authentication first, as strong as the API's elevated claim
 * asks for the same operation. The link comes back to the account center by a target the service signs
 * (`signOwnRedirect`, admitted by `/verify` without the allow-list): the landing (page.ts) spends nothing, it ends
 * the session the link made and asks for a sign-in with the new address.
 */

export const EMAIL = "email";

/** The email change is an E operation of the API (contract §6): the same demand here. */
const GATE = { elevated: true } as const;

export async function emailSection(c: Ctx, view: SectionView) {
  const { account } = view.catalogue;
  const words = account.email;
  const { user } = view.session;
  const recent = await isRecentAuth(c, view.session, GATE);
  return html`<section id="${EMAIL}" class="card">
<h2>${words.title}</h2>
${errorBox(view.error)}
${
  user.email
    ? html`<p class="value"><strong>${user.email}</strong>${
        user.emailVerified
          ? html`<span class="badge ok">${words.verified}</span>`
          : html`<span class="badge warn">${words.unverified}</span>`
      }</p>`
    : html`<p class="value muted">${words.none}</p>`
}
${user.newEmail ? html`<p class="hint">${words.pending(user.newEmail)}</p>` : ""}
${
  recent
    ? html`<form method="post" action="${accountPath(c, "/email")}">
  <label for="newEmail">${words.newEmail}</label>
  <input id="newEmail" name="newEmail" type="email" autocomplete="email" required maxlength="254" aria-describedby="newEmail-hint">
  <p id="newEmail-hint" class="hint">${words.hint}</p>
  <div class="actions"><button class="primary" type="submit">${words.change}</button></div>
</form>`
    : html`<p><a href="${confirmHref(c, EMAIL, GATE)}">${account.confirmFirst}</a></p>`
}
</section>`;
}

export async function changeEmail(c: Ctx, posted: Posted): Promise<Outcome> {
  const gate = await requireRecentAuth(c, posted.session, EMAIL, GATE);
  if (gate) return gate;
  const { errors } = posted.catalogue.account;
  const { user } = posted.session;
  const newEmail = field(posted.params, "newEmail", 254).toLowerCase();
  const refuse = (error: string, status: 400 | 429 = 400): Outcome => ({
    section: EMAIL,
    error,
    status,
  });
  if (!emailField.safeParse(newEmail).success) return refuse(errors.enterEmail);
  if (newEmail === user.email) return refuse(errors.sameEmail);
  // The API's own limit on mails to an address (`rateLimit("EMAIL", "newEmail")`).
  const retryAfter = await rateLimited(c, "EMAIL", newEmail);
  if (retryAfter !== null) return refuse(errors.tooManyAttempts(retryAfter), 429);
  try {
    const ownRedirect = await signOwnRedirect(c.var.config, accountUrl(c));
    await changeUserEmail(c.var.deps, user.id, newEmail, { ownRedirect });
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    if (error instanceof RateLimitedError)
      return refuse(errors.tooManyAttempts(error.retryAfterSeconds), 429);
    if (c.var.config.concealErrors) return refuse(errors.failed);
    if (error.code === "email-already-in-use") return refuse(errors.emailInUse);
    if (error.code === "invalid-email-password") return refuse(errors.emailNotAllowed);
    return refuse(errors.failed);
  }
  return backToAccount(c, EMAIL, "email-sent");
}
