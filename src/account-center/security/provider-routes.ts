import { Hono } from "hono";
import type { AppEnv } from "../../http/app-env";
import { bindBrowser } from "../../http/browser-binding";
import { isOwnSignedRedirect, signOwnRedirect } from "../../lib/redirect";
import { REQUEST_LIFETIME_MS, startProviderSignIn, unlinkIdentity } from "../../providers";
import { accountPath, backToAccount, type Ctx, field } from "../forms";
import { PROVIDERS } from "./providers";
import { confirmedPost, idOf } from "./steps";
import type { Notice } from "./words";

/**
 * The linked providers' form posts. Unlinking goes through `unlinkIdentity` (src/providers/accounts.ts), which keeps
 * the last way to sign in within its one DELETE; linking another is the API's own provider flow with `connect` for
 * this browser's user (src/providers/flow.ts): bound to this browser, its state single use, coming back here by a
 * target the service signs.
 * Threats: a cross-site post linking the attacker's provider identity to the victim's account, or unlinking the
 * owner's (forms.ts refuses it); a borrowed, signed-in browser adding a way in (a recent confirmation first); an
 * account left with no way to sign in (refused: "last way"); unlinking another user's identity by its id ("gone").
 */

/** Where the provider flow comes back to: a landing here that turns its outcome into a notice on the page. */
const LANDING = "/security/providers/linked";

/** The landing's URL as the service signs it (`signOwnRedirect`: admitted by the flow without the allow-list). */
const landingUrl = (c: Ctx) => signOwnRedirect(c.var.config, c.var.config.urls.auth(`/account${LANDING}`));

const UNLINKED: Record<Awaited<ReturnType<typeof unlinkIdentity>>, Notice> = {
  unlinked: "security-provider-unlinked",
  "not-found": "security-gone",
  "last-way": "security-last-way",
};

export const providerRoutes = new Hono<AppEnv>()
  .post("/security/providers/link", async (c) => {
    const posted = await confirmedPost(c, PROVIDERS);
    if ("answer" in posted) return posted.answer;
    const provider = field(posted.params, "provider", 40);
    if (!Object.hasOwn(c.var.config.providers.enabled, provider)) {
      return backToAccount(c, PROVIDERS, "security-unavailable");
    }
    const browserHash = await bindBrowser(c, "provider-flow", REQUEST_LIFETIME_MS / 1000);
    const { url } = await startProviderSignIn(
      c.var.deps,
      provider,
      { redirectTo: await landingUrl(c) },
      browserHash,
      posted.session.user.id,
    );
    // Asked already: this post is the account center's own form, from this origin, after a recent confirmation.
    return c.redirect(url, 303);
  })
  .get(LANDING, async (c) => {
    // Only the flow's own way back says how it went: a URL anyone could type shows no notice at all.
    const url = new URL(c.req.url);
    const received = c.var.config.urls.auth(`/account${LANDING}${url.search}`);
    if (!(await isOwnSignedRedirect(c.var.config, received))) {
      return c.redirect(new URL(`${accountPath(c)}#${PROVIDERS}`, c.req.url).toString(), 303);
    }
    const error = url.searchParams.get("error");
    const notice: Notice = !error
      ? "security-provider-linked"
      : error === "provider-account-already-linked"
        ? "security-provider-taken"
        : "security-provider-failed";
    return backToAccount(c, PROVIDERS, notice);
  })
  .post("/security/providers/unlink", async (c) => {
    const posted = await confirmedPost(c, PROVIDERS);
    if ("answer" in posted) return posted.answer;
    const id = idOf(posted.params);
    const outcome = id ? await unlinkIdentity(c.var.deps, posted.session.user.id, id) : "not-found";
    return backToAccount(c, PROVIDERS, UNLINKED[outcome]);
  });
