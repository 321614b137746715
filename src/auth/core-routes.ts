import { Hono } from "hono";
import type { Config } from "../config";
import type { AppEnv } from "../http/app-env";
import { sessionProof } from "../http/auth";
import { accountRoutes } from "./accounts/account-routes";
import { anonymousRoutes } from "./accounts/anonymous-routes";
import { patRoutes } from "./accounts/pat-routes";
import { signInRoutes } from "./accounts/sign-in-routes";
import { signUpRoutes } from "./accounts/sign-up-routes";
import { userRoutes } from "./accounts/user-routes";
import { devAboutRoutes, devMailboxRoutes, devSmsRoutes } from "./dev/dev-routes";
import { devInboxRoutes } from "./dev/inbox-routes";
import { passwordlessRoutes } from "./links/passwordless-routes";
import { smsRoutes } from "./links/sms-routes";
import { verifyRoutes } from "./links/verify-routes";
import { unlockRoutes } from "./lockout/unlock-routes";
import { mfaRoutes } from "./mfa/mfa-routes";
import { sessionListRoutes } from "./sessions/list-routes";
import { tokenRoutes } from "./sessions/token-routes";
import { securityKeyRoutes } from "./webauthn/security-key-routes";
import { webauthnRoutes } from "./webauthn/webauthn-routes";

/** At the origin root, not under the auth prefix: where browsers look for it (WebAuthn L3 §5.11). */
export { webauthnWellKnownRoutes } from "./webauthn/well-known-routes";

/**
 * Core auth: the Nhost Auth API's own endpoints, one set per sub-feature (contract §3). app.ts mounts them under
 * `AUTH_API_PREFIX` beside the providers, the OAuth2 server and the admin API. The development mailbox and SMS list
 * exist only where their switches are on.
 */
export function coreAuthRoutes(config: Config): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  // A session made or renewed by a request with a DPoP proof is bound to its key (RFC 9449, docs/oauth2.md §10.2):
  // the paths that make or renew sessions. Scoped by path: a `use` without one would reach every route of the auth
  // API mounted after these (the OAuth2 server's own DPoP endpoints among them).
  for (const path of ["/signup/*", "/signin/*", "/token", "/token/*", "/elevate/*"])
    routes.use(path, sessionProof);
  routes
    .route("/", signUpRoutes)
    .route("/", signInRoutes)
    .route("/", tokenRoutes)
    .route("/", sessionListRoutes)
    .route("/", userRoutes)
    .route("/", verifyRoutes)
    .route("/", unlockRoutes)
    .route("/", passwordlessRoutes)
    .route("/", anonymousRoutes)
    .route("/", accountRoutes)
    .route("/", patRoutes)
    .route("/", mfaRoutes)
    .route("/", smsRoutes)
    .route("/", webauthnRoutes)
    .route("/", securityKeyRoutes);
  if (config.devTransports.mailbox) routes.route("/", devMailboxRoutes).route("/", devInboxRoutes);
  if (config.devTransports.sms) routes.route("/", devSmsRoutes);
  if (config.development) routes.route("/", devAboutRoutes(config));
  return routes;
}
