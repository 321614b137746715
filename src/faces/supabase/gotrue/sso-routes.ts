import { type Context, Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { bindBrowser } from "../../../http/browser-binding";
import { rateLimit } from "../../../rate-limits/middleware";
import { findSsoConnection, SSO_REQUEST_LIFETIME_MS, startSsoSignIn } from "../../../sso";
import { GoTrueError } from "./errors";
import {
  appTarget,
  browserChallenge,
  faceCallback,
  openTicket,
  pkceChallenge,
  sealTicket,
} from "./oauth-flow";
import { bodyOf } from "./request";
import { goTrueIssuer } from "./tokens";

/**
 * `signInWithSSO` (contract supabase.md §2): `POST /sso {domain | provider_id, redirect_to, code_challenge…}` →
 * `{url}`, routed to the organizations' enterprise connections (src/sso/): `domain` is an org's verified domain,
 * `provider_id` a connection's id. The sign-in is the core's (`startSsoSignIn`), ending as a provider sign-in of this
 * face does: the face's `/callback`, then `redirect_to` with the session in the fragment or `?code=` under PKCE. The
 * IdPs keep the connections' own callback and ACS (`/sso/oidc/{id}/callback`, `/sso/saml/{id}/acs`).
 */

const ssoBody = z.object({
  domain: z.string().min(1).max(253).nullish(),
  provider_id: z.string().min(1).max(64).nullish(),
  redirect_to: z.string().max(2048).nullish(),
  skip_http_redirect: z.boolean().nullish(),
  code_challenge: z.string().max(256).nullish(),
  code_challenge_method: z.string().max(16).nullish(),
  gotrue_meta_security: z.object({ captcha_token: z.string().max(4096).nullish() }).nullish(),
});

/** `/authorize?sso_ticket=…`: the browser's navigation binds it to the sign-in, which goes to the IdP. */
export async function startSsoFromTicket(c: Context<AppEnv>, sealed: string): Promise<string> {
  const { config, deps } = c.var;
  const ticket = await openTicket(config, sealed, "gotrue-sso", deps.now());
  const browserHash = await bindBrowser(c, "sso-flow", SSO_REQUEST_LIFETIME_MS / 1000);
  const flow = ticket.codeChallenge ? "pkce" : "implicit";
  return startSsoSignIn(deps, {}, browserHash, {
    returnTo: faceCallback(config, appTarget(config, ticket.redirectTo), flow, "sso-flow"),
    codeChallenge: ticket.codeChallenge ?? (await browserChallenge(config, browserHash)),
    connectionId: ticket.connectionId,
  });
}

export const goTrueSsoRoutes = new Hono<AppEnv>().post("/sso", rateLimit("BRUTE_FORCE"), async (c) => {
  const body = await bodyOf(c, ssoBody);
  const { config, deps } = c.var;
  if (body.domain && body.provider_id) {
    throw new GoTrueError(400, "validation_failed", "Only one of provider_id or domain supported");
  }
  if (!body.domain && !body.provider_id) {
    throw new GoTrueError(400, "validation_failed", "A provider_id or domain needs to be provided");
  }
  const codeChallenge = pkceChallenge(
    body.code_challenge ?? undefined,
    body.code_challenge_method ?? undefined,
  );
  const connection = await findSsoConnection(
    deps,
    body.domain ? { domain: body.domain } : { connectionId: body.provider_id! },
  ).catch((error: unknown) => {
    if (error instanceof AppError && error.code === "sso-connection-not-found") {
      throw new GoTrueError(
        404,
        "sso_provider_not_found",
        body.domain ? "No SSO provider assigned for this domain" : "No such SSO provider",
      );
    }
    throw error;
  });
  const ticket = await sealTicket(
    config,
    {
      purpose: "gotrue-sso",
      connectionId: connection.id,
      redirectTo: appTarget(config, body.redirect_to),
      codeChallenge,
    },
    deps.now(),
  );
  const url = new URL(`${goTrueIssuer(config)}/authorize`);
  url.searchParams.set("sso_ticket", ticket);
  return body.skip_http_redirect ? c.json({ url: url.toString() }) : c.redirect(url.toString(), 303);
});
