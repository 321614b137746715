import { LEVEL } from "../browser/acr";
import type { BrowserSession } from "../browser/session";
import { type AuthDemand, judge } from "../browser/step-up";
import type { UserRow } from "../db/schema";
import { abilitiesOf } from "../pages";
import { accountCatalogue, accountPath, type Ctx } from "./forms";
import { type Demanded, reauthPage } from "./reauth-page";

export type { Demanded };

/**
 * Re-authentication before a sensitive change (contract §13): changing the email or the password, deleting the
 * account, and the security sections' TOTP disable, passkey removal, PAT creation and provider unlink. A browser
 * signed in days ago may be a shared or stolen one; whoever holds it must prove, again and just now, to be the
 * account's owner (OWASP Authentication Cheat Sheet, "Require re-authentication for sensitive features").
 *
 * One mechanism with the OAuth2 page's step-up (src/browser/step-up.ts, contract §12): a demand (a level, recent
 * methods only), the browser session's record of methods, and the page's proofs, which raise the session by a method
 * (reauth-routes.ts here). The demand is as strong as the account can sign in: a user with TOTP on confirms with two
 * factors (or a passkey), and where the API's elevated claim applies (contract §6, `AUTH_REQUIRE_ELEVATED_CLAIM`:
 * `required`, or `recommended` for a user with a security key) an `elevated` action takes a passkey, so the page is
 * no way around the operator's setting with a phished password.
 */

/** How recent the methods that count must be: a change made in the next few minutes, not a session's lifetime. */
export const RECENT_AUTH_MS = 5 * 60_000;

export interface RecentAuthOptions {
  /** The action is one the API marks E (contract §6): under the elevated-claim setting, a passkey. */
  elevated?: boolean;
}

/** The demand for this user, and what they can meet it with here. */
export async function recentDemand(
  c: Ctx,
  user: UserRow,
  options: RecentAuthOptions = {},
): Promise<Demanded> {
  const deps = c.var.deps;
  const abilities = await abilitiesOf(deps, user);
  const mode = deps.config.elevation;
  const elevation =
    options.elevated === true && (mode === "required" || (mode === "recommended" && abilities.passkey));
  const level = elevation ? LEVEL.phr : abilities.totp ? LEVEL.mfa : LEVEL.pwd;
  const demand: AuthDemand = { level, notBefore: deps.now() - RECENT_AUTH_MS };
  return { demand, abilities };
}

/** Whether the browser session meets the demand now: the sensitive forms show, or a "confirm it's you" link. */
export async function isRecentAuth(
  c: Ctx,
  session: BrowserSession,
  options: RecentAuthOptions = {},
): Promise<boolean> {
  const { demand } = await recentDemand(c, session.user, options);
  return judge(session.methods, demand) === "met";
}

/** An anchor id of a section: what the page comes back to after the proof. Anything else is the page's top. */
export const sectionOf = (value: string | null | undefined) =>
  value && /^[a-z0-9-]{1,40}$/.test(value) ? value : "";

/** A GET link that shows the re-authentication first and then comes back to `#section`. */
export const confirmHref = (c: Ctx, section: string, options: RecentAuthOptions = {}) =>
  `${accountPath(c, "/confirm")}?section=${encodeURIComponent(sectionOf(section))}${options.elevated ? "&elevated=1" : ""}`;

/**
 * Gate for a sensitive form post: `null` when the browser session meets the demand; otherwise the re-authentication
 * page (its proofs post to `{prefix}/account/reauth/*` and then come back to `#section`), to be returned as is. The
 * post itself is not carried through the proof: no secret lands in a hidden field, and the person submits again.
 */
export async function requireRecentAuth(
  c: Ctx,
  session: BrowserSession,
  section: string,
  options: RecentAuthOptions = {},
): Promise<Response | null> {
  const { demand, abilities } = await recentDemand(c, session.user, options);
  if (judge(session.methods, demand) === "met") return null;
  return reauthPage(c, session, accountCatalogue(c, session.user.locale), {
    section,
    elevated: options.elevated === true,
    demanded: { demand, abilities },
    status: 401,
  });
}
