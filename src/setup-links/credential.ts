import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { SetupLinkRow } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { countGuess } from "../rate-limits/buckets";
import { addressKey } from "../rate-limits/client-address";
import { linkOfToken, touchLink } from "./links";

/**
 * The link is the credential (contract operators.md §5): no account. Opening it moves the token from the address bar
 * into an HttpOnly cookie (so it leaves the history, and no Referer carries it), and every later request of the
 * pages is checked against the link as it stands now: revoked or expired, the next click shows the same page as a
 * guessed one. Wrong tokens are counted per address (the `BRUTE_FORCE` bucket, exactly: `countGuess`); past the
 * limit every attempt from the address is refused, the right one too, so the guesser learns nothing from it.
 *
 * SameSite=Lax: the cookie comes back on the IdP's redirect after a test (a top-level GET), never on another site's
 * POST; the forms also pass the same-origin check (./page-routes.ts), as the hosted pages' forms do.
 */

/** The auth app's context, with the link the guard found (set on every page behind it). */
export type SetupEnv = AppEnv & { Variables: AppEnv["Variables"] & { setupLink?: SetupLinkRow } };

/** The link of a page behind the guard. */
export function linkOf(c: Context<SetupEnv>): SetupLinkRow {
  const link = c.var.setupLink;
  if (!link) throw new Error("setup link pages: the guard did not run");
  return link;
}

/** The cookie's lifetime: the link's, at most a working day (the link opened again gives a new one). */
const COOKIE_MAX_S = 12 * 3600;

function cookieName(c: Context<AppEnv>) {
  const secure = new URL(c.var.config.urls.server).protocol === "https:";
  return { name: secure ? "__Host-setup-link" : "setup-link", secure };
}

export type LinkCheck = { link: SetupLinkRow } | { refused: "gone" } | { refused: "too-many"; wait: number };

/** The link this token names, with the guess counted for the client's address. */
export async function checkToken(c: Context<AppEnv>, token: string | undefined): Promise<LinkCheck> {
  const deps = c.var.deps;
  const link = await linkOfToken(deps, token);
  const wait = await countGuess(
    c.env,
    deps.config.rateLimits,
    "setup-links",
    addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
    link !== undefined,
    deps.now(),
  );
  if (wait !== null) return { refused: "too-many", wait };
  if (!link) {
    // A refused link is a use too: the operator sees guesses and stale links in the audit log.
    deps.audit({ type: "setup-link.refused", userId: null, detail: { path: c.req.path } });
    return { refused: "gone" };
  }
  touchLink(deps, link.id);
  return { link };
}

export function keepToken(c: Context<AppEnv>, link: SetupLinkRow, token: string) {
  const { name, secure } = cookieName(c);
  const maxAge = Math.max(1, Math.min(COOKIE_MAX_S, Math.floor((link.expiresAt - c.var.deps.now()) / 1000)));
  setCookie(c, name, token, { path: "/", httpOnly: true, secure, sameSite: "Lax", maxAge });
}

export const tokenOf = (c: Context<AppEnv>) => getCookie(c, cookieName(c).name);

export function forgetToken(c: Context<AppEnv>) {
  const { name, secure } = cookieName(c);
  deleteCookie(c, name, { path: "/", secure });
}

/** The pages' guard: the cookie's link as it stands, else `refuse` answers (the one page for every refusal). */
export const requireLink = (
  refuse: (c: Context<AppEnv>, check: Exclude<LinkCheck, { link: unknown }>) => Response | Promise<Response>,
) =>
  createMiddleware<SetupEnv>(async (c, next) => {
    const check = await checkToken(c, tokenOf(c));
    if (!("link" in check)) {
      if (check.refused === "gone") forgetToken(c);
      return refuse(c, check);
    }
    c.set("setupLink", check.link);
    await next();
  });
