import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { FEDCM_PATH } from "../browser/session";
import type { AppEnv } from "../http/app-env";
import { bodyText } from "../http/validation";
import { consentedClients, fedcmClient, forgetConsent, issueFedCmCode } from "../oauth2";
import { accountOf } from "./account";
import { type Ctx, corsFor, fromBrowserPrompt, refusalOf, refuse, signedIn } from "./answers";
import { configFile, ENDPOINTS, wellKnownFile } from "./documents";
import { ACCOUNTS_DOC, ASSERTION_DOC, CLIENT_METADATA_DOC, CONFIG_DOC, DISCONNECT_DOC } from "./operations";
import { readAsk } from "./params";

/**
 * FedCM's identity provider (W3C Federated Credential Management): the endpoints the browser calls for its own
 * "Sign in with …" prompt on a relying party's page. Every one answers only the browser's prompt
 * (`Sec-Fetch-Dest: webidentity`), and only while the authorization server is on: the assertion is one of its codes.
 */

/** The config file and the well-known file may be cached a little: they change with the brand only. */
const CACHE_DOCUMENT = { "Cache-Control": "public, max-age=300" };

const promptOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.oauth2.enabled) return refuse(c, 404, "invalid_request");
  if (!fromBrowserPrompt(c)) return refuse(c, 400, "invalid_request");
  await next();
});

/** The form of a POST, bounded by the auth API's body limit; a repeated field is refused like OAuth2's (RFC 6749 §3.1). */
async function formOf(c: Ctx): Promise<Map<string, string> | null> {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return null;
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(await bodyText(c))) {
    if (form.has(name)) return null;
    form.set(name, value);
  }
  return form;
}

/**
 * The caller of the assertion and disconnect endpoints: a form from the page of an origin a client registered, with a
 * person signed in here; else the refusal to answer (no CORS for an origin no client registered: its script reads
 * nothing, not even the error).
 */
async function signedInCaller(c: Ctx) {
  const origin = c.req.header("origin");
  const form = await formOf(c);
  const client = form && (await fedcmClient(c.var.deps, form.get("client_id") ?? "", origin));
  if (!form || !client || !origin) return refuse(c, 400, "unauthorized_client");
  const session = await signedIn(c);
  if (!session) return refuse(c, 401, "access_denied", origin);
  return { origin, form, client, session };
}

/** `/.well-known/web-identity` at the origin's root (the eTLD+1's must serve the same: docs/fedcm.md). */
export const wellKnownRoutes = new Hono<AppEnv>().get("/.well-known/web-identity", (c) => {
  if (!c.var.config.oauth2.enabled) return refuse(c, 404, "invalid_request");
  if (!fromBrowserPrompt(c)) return refuse(c, 400, "invalid_request");
  return c.json(wellKnownFile(c.var.config), 200, CACHE_DOCUMENT);
});

export const fedcmRoutes = new Hono<AppEnv>()
  // A fault anywhere before an answer (a D1 read of the client or the session): FedCM's shape, no CORS.
  .onError((caught, c) => refusalOf(c, caught))
  .use(`${FEDCM_PATH}/*`, promptOnly)
  // § The config file (#idp-api-config-file).
  .get(ENDPOINTS.config, CONFIG_DOC, async (c) => c.json(await configFile(c.var.deps), 200, CACHE_DOCUMENT))
  // § Accounts endpoint (#idp-api-accounts-endpoint): the browser sends no Origin here, so the answer is the same
  // whichever relying party asks; the browser shows it to the person only. Nobody signed in: 401, which the browser
  // takes as "logged out" until a `Set-Login: logged-in`.
  .get(ENDPOINTS.accounts, ACCOUNTS_DOC, async (c) => {
    const session = await signedIn(c);
    if (!session) return refuse(c, 401, "login_required");
    const approved = await consentedClients(c.var.deps, session.user.id);
    return c.json({ accounts: [accountOf(session.user, approved)] }, 200, { "Cache-Control": "no-store" });
  })
  // § Extension: Client Metadata (#idp-api-client-id-metadata-endpoint): the relying party's policy and terms,
  // only to a page of an origin the client registered; any other asker learns not even that the client exists.
  .get(ENDPOINTS.clientMetadata, CLIENT_METADATA_DOC, async (c) => {
    const origin = c.req.header("origin");
    const client = await fedcmClient(c.var.deps, c.req.query("client_id") ?? "", origin);
    if (!client || !origin) return refuse(c, 404, "invalid_request");
    corsFor(c, origin);
    return c.json(
      {
        ...(client.policyUri ? { privacy_policy_url: client.policyUri } : {}),
        ...(client.tosUri ? { terms_of_service_url: client.tosUri } : {}),
      },
      200,
      { "Cache-Control": "no-store" },
    );
  })
  // § Identity assertion endpoint (#idp-api-id-assertion-endpoint): "An IDP MUST check the Origin header … is
  // represented by the clientId". The token is an authorization code for that client, redeemed at /oauth2/token.
  .post(ENDPOINTS.assertion, ASSERTION_DOC, async (c) => {
    const caller = await signedInCaller(c);
    if (caller instanceof Response) return caller;
    const { origin, form, client, session } = caller;
    // The browser names the account the person picked: it must be the one signed in here now.
    if (form.get("account_id") !== session.user.id) return refuse(c, 400, "invalid_request", origin);
    const ask = readAsk(form);
    if (!ask) return refuse(c, 400, "invalid_request", origin);
    try {
      const code = await issueFedCmCode(
        c.var.deps,
        client,
        { userId: session.user.id, times: session.methods, sid: session.sessionId, actor: session.actor },
        ask,
      );
      corsFor(c, origin);
      return c.json({ token: code }, 200, { "Cache-Control": "no-store" });
    } catch (caught) {
      return refusalOf(c, caught, origin);
    }
  })
  // § Disconnect endpoint (#idp-api-disconnect-endpoint): the person's consent to the client is forgotten, so the
  // next prompt shows the disclosure again; the answer names the account the browser should forget.
  .post(ENDPOINTS.disconnect, DISCONNECT_DOC, async (c) => {
    const caller = await signedInCaller(c);
    if (caller instanceof Response) return caller;
    const { origin, form, client, session } = caller;
    const hint = form.get("account_hint") ?? "";
    const user = session.user;
    if (hint !== user.id && hint.toLowerCase() !== (user.email ?? "").toLowerCase()) {
      return refuse(c, 400, "invalid_request", origin);
    }
    try {
      await forgetConsent(c.var.deps, user.id, client.clientId);
      corsFor(c, origin);
      return c.json({ account_id: user.id }, 200, { "Cache-Control": "no-store" });
    } catch (caught) {
      return refusalOf(c, caught, origin);
    }
  });
