import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import {
  addSecurityKey,
  credentialSignals,
  registrationCredential,
  UPGRADE_WINDOW_MS,
  type UpgradeClaim,
  verifyAddSecurityKey,
} from "../auth";
import type { SignInMethod } from "../browser/acr";
import { type Ctx, paths } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { pageText } from "../browser/page-text";
import { type BrowserSession, readBrowserSession } from "../browser/session";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { jsonBody } from "../http/validation";
import { passkeyUpgradeScript } from "./passkey-upgrade-script";

/**
 * Passkeys by default on the hosted pages (docs/passkeys.md): after a password, link or code sign-in, on the way back
 * to the app, a short page whose script asks the browser for a passkey without a prompt (`mediation: "conditional"`,
 * WebAuthn L3 §5.1.3) through the API's upgrade (src/auth/webauthn/upgrade.ts), tells the password manager the
 * account's passkeys and name (the Signal API, §5.1.10), and goes on to the app whatever happens. The page's two JSON
 * routes read the page's cookie, not a bearer: the cookie's MAC vouches for the first factor and its time.
 */

/** The first factors a password manager stands in for (the same as the API's, upgrade.ts). */
const FIRST_FACTORS: SignInMethod[] = ["password", "email-link", "email-otp", "sms-otp"];

/** The page session's claim to an upgrade: its session and its newest first factor; undefined: none. */
function claimOf(session: BrowserSession): UpgradeClaim | undefined {
  const times = FIRST_FACTORS.map((method) => session.methods[method]).filter((at) => at !== undefined);
  if (times.length === 0 || session.actor) return undefined;
  return { sessionId: session.sessionId, firstFactorAt: Math.max(...times) };
}

/**
 * The page between a fresh sign-in (any way, within the upgrade window) and the app, or undefined (security keys
 * off, an older sign-in, an impersonation: nothing is signalled for an operator acting as the user): then the caller
 * redirects as before. The upgrade is offered only after a first factor (`data-upgrade`); the signals always.
 * `target` is where the app gets its session (a 303 otherwise).
 */
export async function upgradeStep(c: Ctx, session: BrowserSession, target: string, uiLocales: string[]) {
  const { deps, config } = c.var;
  const fresh = deps.now() - session.authTime <= UPGRADE_WINDOW_MS;
  if (!config.webauthn.enabled || session.actor || !fresh) return undefined;
  const claim = claimOf(session);
  const upgradePath =
    claim && deps.now() - claim.firstFactorAt! <= UPGRADE_WINDOW_MS ? `${paths(c).page}/passkey-upgrade` : "";
  const t = pageText(c, uiLocales, session.user.locale);
  const signals = JSON.stringify(await credentialSignals(deps, session.user));
  const body = html`<h1>${t.continue}</h1>
<p><a id="continue" href="${target}">${t.continue}</a></p>
<div id="passkey-upgrade" data-upgrade="${upgradePath}" data-signals="${signals}" hidden></div>`;
  return render(c, 200, t.continue, body, { t, script: passkeyUpgradeScript() });
}

/**
 * A JSON post of the page's own script: same origin only (a cross-site page can send no JSON with the cookie, which
 * is SameSite=Lax; the browser's `Sec-Fetch-Site` says so outright), by a signed-in page session that may upgrade.
 */
async function upgrader(c: Ctx) {
  const site = c.req.header("sec-fetch-site");
  const origin = c.req.header("origin");
  if (site ? site !== "same-origin" : origin !== new URL(c.req.url).origin) {
    throw new AppError("forbidden", "the page's own script only");
  }
  const session = await readBrowserSession(c);
  if (!session) throw new AppError("unauthorized", "not signed in to the pages");
  const claim = claimOf(session);
  if (!claim) throw new AppError("forbidden", "passkey upgrade refused: no password, link or code sign-in");
  return { userId: session.user.id, claim };
}

export const passkeyUpgradeRoutes = new Hono<AppEnv>()
  .post("/passkey-upgrade", async (c) => {
    const { userId, claim } = await upgrader(c);
    return c.json(await addSecurityKey(c.var.deps, userId, "required", claim));
  })
  .post("/passkey-upgrade/verify", jsonBody(z.object({ credential: registrationCredential })), async (c) => {
    const { userId, claim } = await upgrader(c);
    const credential = c.req.valid("json").credential as unknown as RegistrationResponseJSON;
    return c.json(await verifyAddSecurityKey(c.var.deps, userId, { credential }, claim));
  });
