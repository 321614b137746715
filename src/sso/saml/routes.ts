import { type Context, Hono } from "hono";
import { z } from "zod";
import { readsDirectory } from "../../db/directory";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { operation, REDIRECT_ANSWER } from "../../http/documented";
import { bodyText } from "../../http/validation";
import { withQuery } from "../../lib/redirect";
import { rateLimit } from "../../rate-limits/middleware";
import { finishSsoSignIn, ssoFailure } from "../finish";
import { takeResult } from "../requests";
import { finishConnectionTest } from "../test-round-trip";
import { acceptSamlResponse, connectionNotFound, samlConnection } from "./acs";
import { spMetadataXml } from "./metadata";

/**
 * The SAML service provider's routes (contract organizations.md §2), mounted by the sso core under the auth prefix:
 * the SP metadata, the ACS's POST (the IdP's form post) and the ACS's GET (the same browser, with its cookie).
 */

const acsForm = z.object({
  SAMLResponse: z.string().describe("The IdP's response, base64 (POST binding, SAML bindings §3.5)"),
  RelayState: z
    .string()
    .optional()
    .describe("IdP-initiated only: where to land, if on the allow-list of redirect URLs"),
});

const resultQuery = z.object({
  result: z.string().describe("The one-time id the POST bounced the browser with"),
});

/** The form's two fields; repeated fields keep their first value. */
async function formOf(c: Context<AppEnv>): Promise<{ SAMLResponse?: string; RelayState?: string }> {
  const form = new URLSearchParams(await bodyText(c));
  return {
    ...(form.has("SAMLResponse") ? { SAMLResponse: form.get("SAMLResponse")! } : {}),
    ...(form.has("RelayState") ? { RelayState: form.get("RelayState")! } : {}),
  };
}

export const samlRoutes = new Hono<AppEnv>()
  .get(
    "/sso/saml/:connectionId/metadata",
    operation({
      summary: "SAML service provider metadata",
      description:
        "The SP metadata of one SAML connection (`application/samlmetadata+xml`), for the IdP's administrator: " +
        "entity ID (this URL), the ACS URL (HTTP-POST binding) and the NameID format (email). Unknown or disabled " +
        "connection: 404 `sso-connection-not-found`.",
      answers: { 200: { description: "The metadata XML.", media: "saml-metadata" } },
    }),
    async (c) => {
      // A setup link's connection not enabled yet: its IdP's administrator needs these values to set it up.
      const connection = await samlConnection(c.var.deps, c.req.param("connectionId"), true);
      return c.body(spMetadataXml(c.var.config, connection.id), 200, {
        "content-type": "application/samlmetadata+xml; charset=utf-8",
        "cache-control": "public, max-age=300",
      });
    },
  )
  .post(
    "/sso/saml/:connectionId/acs",
    operation({
      summary: "SAML assertion consumer service",
      description:
        "The IdP's POST-binding response. It must be signed (response or assertion) by a certificate of the IdP's " +
        "metadata, for this SP (Audience), this ACS (Recipient, Destination), inside its time window, answering a " +
        "sign-in started here (`InResponseTo`; IdP-initiated only when the connection allows it), its assertion ID " +
        "never seen before. Accepted: 303 to the GET of this path with a one-time `result` id (the response is kept " +
        "server-side, never put in a URL). Refused: 400 `sso-assertion-invalid` saying why, or `invalid-state` when " +
        "no sign-in under way matches.",
      request: { target: "form", schema: acsForm },
      answers: { 303: REDIRECT_ANSWER("To the GET of this path, with `result`.") },
    }),
    // Each post costs an RSA verification or two: counted per address like the other ways in (429 past the limit).
    rateLimit("BRUTE_FORCE"),
    async (c) => {
      const deps = c.var.deps;
      const connection = await samlConnection(deps, c.req.param("connectionId"), true);
      const oneTimeId = await acceptSamlResponse(deps, connection, await formOf(c));
      return c.redirect(
        withQuery(c.var.config.urls.auth(`/sso/saml/${connection.id}/acs`), { result: oneTimeId }),
        303,
      );
    },
  )
  .get(
    "/sso/saml/:connectionId/acs",
    operation({
      summary: "SAML sign-in finish",
      description:
        "Where the ACS bounces the browser: the verified identity is taken once and the sign-in finishes only in " +
        "the browser that started it (its `sso-flow` cookie). Ends at the request's `redirectTo` with " +
        "`refreshToken`, or `error` and `errorDescription`; an unknown, used or expired `result`: at " +
        "`AUTH_CLIENT_URL` with `error=invalid-state`.",
      request: { target: "query", schema: resultQuery },
      answers: { 302: REDIRECT_ANSWER("To redirectTo, with the outcome in the query.") },
    }),
    async (c) => {
      const deps = c.var.deps;
      // The connection (named by the path) is read beside the result's take: one wave, not two (issue 48, "Round
      // trips"). Read as a test round trip may use it; a sign-in's needs it enabled, checked once the take says which.
      // With one shard the take also answers the asserted email's user (a hint: ../requests.ts), so the user's reads
      // start in the next trip beside the domain check (../jit.ts).
      const [taken, found] = await Promise.all([
        takeResult(deps, c.req.query("result"), { userHint: !readsDirectory(deps.shards) }),
        samlConnection(deps, c.req.param("connectionId"), true).catch((error: unknown) => ({ error })),
      ]);
      if (!taken) {
        const error = new AppError(
          "invalid-state",
          "this SAML sign-in is unknown, expired or already finished",
        );
        return ssoFailure(c, c.var.config.urls.defaultRedirect, error);
      }
      try {
        if ("error" in found) throw found.error;
        const connection = found;
        if (!taken.request.test && !connection.enabled) throw connectionNotFound();
        if (taken.request.test)
          return await finishConnectionTest(c, connection, taken.identity, taken.request);
        return await finishSsoSignIn(c, connection, taken.identity, taken.request, taken.userHint);
      } catch (error) {
        return ssoFailure(c, taken.request.redirectTo, error);
      }
    },
  );
