import { Hono } from "hono";
import { html } from "hono/html";
import { createPersonalAccessToken, revokePersonalAccessToken } from "../../auth";
import type { AppEnv } from "../../http/app-env";
import { accountPost, backToAccount, field } from "../forms";
import { confirmedPost, idOf, securityStep } from "./steps";
import { createdBody, createForm, DEFAULT_LIFETIME, LIFETIMES, NAME_MAX, TOKENS } from "./tokens";

/**
 * The personal access tokens' form posts, through the API's own functions (src/auth/accounts/pat.ts: a token stored
 * only as its SHA-256, the same audit events). Creating is elevated as in the API (`POST /pat`, contract §6).
 * Threats: a cross-site post minting a token (forms.ts refuses it; the token would be shown to the signed-in browser
 * anyway, never to the other site); a borrowed, signed-in browser minting a long-lived way in (a recent confirmation,
 * with a passkey where the elevated claim applies); the token kept by a cache after it was shown (`no-store`); revoking
 * another user's token by its id (the delete is scoped to the signed-in user: "gone", nothing revoked).
 */

const DAY_MS = 86_400_000;

export const tokenRoutes = new Hono<AppEnv>()
  .post("/security/tokens/create", async (c) => {
    const posted = await confirmedPost(c, TOKENS, { elevated: true });
    if ("answer" in posted) return posted.answer;
    const w = posted.catalogue.accountSecurity;
    const name = field(posted.params, "name", NAME_MAX + 1);
    if (!name || name.length > NAME_MAX) {
      return securityStep(c, posted, {
        title: w.tokens.create,
        status: 400,
        body: html`<h1>${w.tokens.create}</h1>${createForm(c, posted, w.errors.tokenName, name.slice(0, NAME_MAX))}`,
      });
    }
    const asked = Number(field(posted.params, "days", 4));
    const days = (LIFETIMES as readonly number[]).includes(asked) ? asked : DEFAULT_LIFETIME;
    const created = await createPersonalAccessToken(c.var.deps, posted.session.user.id, {
      expiresAt: new Date(c.var.deps.now() + days * DAY_MS),
      metadata: { name },
    });
    return securityStep(c, posted, {
      title: w.tokens.shownTitle,
      body: createdBody(c, posted, created.personalAccessToken),
      secret: true,
    });
  })
  .post("/security/tokens/revoke", async (c) => {
    // Revoking only takes access away: no confirmation, only the checks every post passes.
    const posted = await accountPost(c);
    if ("answer" in posted) return posted.answer;
    const id = idOf(posted.params);
    const revoked = id !== "" && (await revokePersonalAccessToken(c.var.deps, posted.session.user.id, id));
    return backToAccount(c, TOKENS, revoked ? "security-token-revoked" : "security-gone");
  });
