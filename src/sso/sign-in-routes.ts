import { type Context, Hono } from "hono";
import { z } from "zod";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { bindBrowser, browserBinding } from "../http/browser-binding";
import { operation, REDIRECT_ANSWER } from "../http/documented";
import { bodyText, describeIssues } from "../http/validation";
import { withQuery } from "../lib/redirect";
import { rateLimit } from "../rate-limits/middleware";
import { findConnection } from "./connections";
import { finishSsoSignIn, ssoFailure } from "./finish";
import { oidcIdentity } from "./oidc";
import { SSO_REQUEST_LIFETIME_MS, takeSsoRequest } from "./requests";
import { samlRoutes } from "./saml";
import { startSchema, startSsoSignIn } from "./start";
import { finishConnectionTest } from "./test-round-trip";

/**
 * The enterprise sign-in's browser legs (contract organizations.md §2): `POST /sso/start` (a JSON call, or the
 * built-in page's form post) and the OIDC callback; the SAML ACS and metadata come from src/sso/saml/.
 */

/** The body as JSON or as a form (the built-in sign-in page posts one). */
async function startBody(c: Context<AppEnv>) {
  const text = await bodyText(c);
  const isForm = (c.req.header("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
  let raw: unknown;
  if (isForm) {
    raw = Object.fromEntries(new URLSearchParams(text));
  } else {
    try {
      raw = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw new AppError("invalid-request", "the body is not JSON");
    }
  }
  const parsed = startSchema.safeParse(raw);
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return { body: parsed.data, isForm };
}

export const ssoSignInRoutes = new Hono<AppEnv>()
  .post(
    "/sso/start",
    operation({
      summary: "Start an enterprise sign-in",
      description:
        "Finds the connection of the email's verified domain (or of `domain`, or of the org `orgSlug`) and answers " +
        "the IdP's URL: `{url}` for JSON, a 303 there for a form post. The browser gets a cookie binding the sign-in " +
        "to it; back from the IdP it lands on `redirectTo` with `refreshToken`, or `error` and `errorDescription`. " +
        "`redirectTo` not allowed: 400 `redirectTo-not-allowed`; no connection: 404 `sso-connection-not-found`; " +
        "the IdP's discovery unreachable: 503.",
      request: { target: "json", schema: startSchema },
      answers: {
        200: { description: "The IdP's URL.", schema: z.object({ url: z.string() }) },
        303: REDIRECT_ANSWER("To the IdP (a form post)."),
      },
    }),
    rateLimit("BRUTE_FORCE"),
    async (c) => {
      const { body, isForm } = await startBody(c);
      const browserHash = await bindBrowser(c, "sso-flow", SSO_REQUEST_LIFETIME_MS / 1000);
      const url = await startSsoSignIn(c.var.deps, body, browserHash);
      return isForm ? c.redirect(url, 303) : c.json({ url });
    },
  )
  .get(
    "/sso/oidc/:connectionId/callback",
    operation({
      summary: "An OIDC connection's callback",
      description:
        "Where the IdP sends the browser back (`code`, `state`). The state is taken once and only by the browser " +
        "that started; the code is exchanged and the ID token checked (issuer, audience, nonce, signature, expiry). " +
        "Ends at `redirectTo` with `refreshToken`, or `error` and `errorDescription`: `invalid-state` (unknown, used, " +
        "expired, or another browser's), `sso-assertion-invalid`, `sso-email-outside-domains`.",
      answers: { 302: REDIRECT_ANSWER("To redirectTo, with the outcome in the query.") },
    }),
    async (c) => {
      const deps = c.var.deps;
      const params = new URL(c.req.url).searchParams;
      const connectionId = c.req.param("connectionId");
      const request = await takeSsoRequest(
        deps,
        connectionId,
        params.get("state") ?? undefined,
        await browserBinding(c, "sso-flow"),
      );
      if (!request) {
        const error = new AppError("invalid-state");
        return c.redirect(
          withQuery(deps.config.urls.defaultRedirect, { error: error.code, errorDescription: error.message }),
          302,
        );
      }
      try {
        const connection = await findConnection(deps, connectionId);
        if (connection?.type !== "oidc") throw new AppError("sso-connection-not-found");
        if (request.test) {
          // A test round trip (operators.md §5): a refusal is its outcome, shown on the page that started it.
          const verified = await oidcIdentity(deps, connection, request, params).then(
            (identity) => ({ identity, refusal: undefined }),
            (refusal: unknown) => ({ identity: null, refusal }),
          );
          return await finishConnectionTest(c, connection, verified.identity, request, verified.refusal);
        }
        const identity = await oidcIdentity(deps, connection, request, params);
        return await finishSsoSignIn(c, connection, identity, request);
      } catch (error) {
        return ssoFailure(c, request.redirectTo, error);
      }
    },
  )
  .route("/", samlRoutes);
