import { html } from "hono/html";
import { deleteUser } from "../admin";
import { endBrowserSession } from "../browser/session";
import { accountPath, type Ctx, field, type Outcome, type Posted, type SectionView } from "./forms";
import { errorBox } from "./html";
import { confirmHref, isRecentAuth, requireRecentAuth } from "./recent-auth";
import { standalonePage } from "./sign-out";

/**
 * Delete account: a danger zone, behind a recent re-authentication (as strong as an E operation's: deleting is more
 * than changing the address) and a typed word, so neither a borrowed browser nor a stray click deletes anyone. The
 * Nhost API has no self-deletion; this is the admin API's deletion (`DELETE /admin/users/{id}`, src/admin/users.ts
 * `deleteUser`): every session and OAuth2 grant ends first, then the user's rows (cascading to keys, PATs,
 * providers, MFA), then the directory's entries. Files stay, as with the admin's. Audited as `account.delete`.
 */

export const DELETE = "delete";

const GATE = { elevated: true } as const;

/** The typed word, compared without regard to case or surrounding spaces. */
const matches = (typed: string, word: string, language: string) =>
  typed.trim().toLocaleUpperCase(language) === word.toLocaleUpperCase(language);

export async function deleteSection(c: Ctx, view: SectionView) {
  const { account } = view.catalogue;
  const words = account.deletion;
  const recent = await isRecentAuth(c, view.session, GATE);
  return html`<section id="${DELETE}" class="card danger">
<h2>${words.title}</h2>
<p class="lead">${words.lead}</p>
${errorBox(view.error)}
${
  recent
    ? html`<form method="post" action="${accountPath(c, "/delete")}">
  <label for="confirm-delete">${words.typeToConfirm(words.confirmWord)}</label>
  <input id="confirm-delete" name="confirm" type="text" autocomplete="off" required>
  <div class="actions"><button class="danger" type="submit">${words.button}</button></div>
</form>`
    : html`<p><a href="${confirmHref(c, DELETE, GATE)}">${account.confirmFirst}</a></p>`
}
</section>`;
}

export async function deleteAccount(c: Ctx, posted: Posted): Promise<Outcome> {
  const gate = await requireRecentAuth(c, posted.session, DELETE, GATE);
  if (gate) return gate;
  const { account, pages } = posted.catalogue;
  const word = account.deletion.confirmWord;
  if (!matches(field(posted.params, "confirm", 100), word, pages.lang)) {
    return { section: DELETE, error: account.errors.typeConfirmWord(word), status: 400 };
  }
  const { user } = posted.session;
  await deleteUser(c.var.deps, user.id);
  c.var.deps.audit({ type: "account.delete", userId: user.id, detail: { email: user.email } });
  endBrowserSession(c);
  return standalonePage(c, posted.catalogue, account.deletion.deletedTitle, account.deletion.deletedLead);
}
