import { html } from "hono/html";
import { updateOwnProfile } from "../auth";
import { AppError } from "../errors";
import {
  accountPath,
  backToAccount,
  type Ctx,
  field,
  type Outcome,
  type Posted,
  type SectionView,
} from "./forms";
import { errorBox } from "./html";

/**
 * Profile: the display name and the locale (the Nhost meaning: the language of the user's mails, one of
 * `AUTH_LOCALE_ALLOWED_LOCALES`), saved under the rules of src/auth/profile.ts. The avatar is shown as its URL only:
 * the page's CSP loads no image from elsewhere, and the URL is the app's to set.
 */

export const PROFILE = "profile";

/** A locale's name in the page's language (`fr` → "français" on a French page), or the code itself. */
function localeName(code: string, pageLanguage: string): string {
  try {
    const name = new Intl.DisplayNames([pageLanguage], { type: "language" }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

export function profileSection(c: Ctx, view: SectionView) {
  const { account, pages } = view.catalogue;
  const { user } = view.session;
  const words = account.profile;
  const locales = c.var.config.locales.allowed;
  // A locale from before the list changed stays selectable until the person picks another.
  const choices = locales.includes(user.locale) ? locales : [user.locale, ...locales];
  return html`<section id="${PROFILE}" class="card">
<h2>${words.title}</h2>
${errorBox(view.error)}
<form method="post" action="${accountPath(c, "/profile")}">
  <label for="displayName">${words.displayName}</label>
  <input id="displayName" name="displayName" type="text" autocomplete="name" maxlength="32" value="${user.displayName}" aria-describedby="displayName-hint">
  <p id="displayName-hint" class="hint">${words.displayNameHint}</p>
  <label for="locale">${words.locale}</label>
  <select id="locale" name="locale" aria-describedby="locale-hint">
    ${choices.map(
      (code) =>
        html`<option value="${code}"${code === user.locale ? " selected" : ""}>${localeName(code, pages.lang)}</option>`,
    )}
  </select>
  <p id="locale-hint" class="hint">${words.localeHint}</p>
  <p class="value"><strong>${words.avatar}:</strong> ${user.avatarUrl ? html`<span>${user.avatarUrl}</span>` : html`<span class="muted">${words.noAvatar}</span>`}</p>
  <div class="actions"><button class="primary" type="submit">${words.save}</button></div>
</form>
</section>`;
}

export async function saveProfile(c: Ctx, posted: Posted): Promise<Outcome> {
  const { account } = posted.catalogue;
  const displayName = field(posted.params, "displayName", 200);
  const locale = field(posted.params, "locale", 10);
  try {
    // A field the post does not carry is left as it is (an empty one is a choice: no display name).
    await updateOwnProfile(c.var.deps, posted.session.user.id, {
      ...(posted.params.has("displayName") ? { displayName } : {}),
      ...(locale && locale !== posted.session.user.locale ? { locale } : {}),
    });
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    const words = error.code === "locale-not-allowed" ? account.errors.locale : account.errors.displayName;
    return { section: PROFILE, error: words, status: 400 };
  }
  return backToAccount(c, PROFILE, "profile-saved");
}
