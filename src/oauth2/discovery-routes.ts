import { Hono } from "hono";
import { cors } from "hono/cors";
import type { Config } from "../config";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jwksSchema } from "../http/system-routes";
import { getKeySet } from "../signing-keys/keys";
import { supportedDetailTypes } from "./authorization-details";
import { discoveryDocument } from "./discovery";
import { type Ctx, requireEnabled } from "./route-support";
import { discoverySchema } from "./wire";

/** The server's metadata (OpenID Connect Discovery, RFC 8414) and its keys, where clients look for them. */

const discovery = async (c: Ctx) =>
  c.json(
    {
      ...(await discoveryDocument(c.var.config)),
      // RFC 9396 §10.1: set per client by the admin, so read from the clients (supported-types.ts).
      authorization_details_types_supported: await supportedDetailTypes(c.var.deps),
    },
    200,
    { "Cache-Control": "public, max-age=300" },
  );

const DISCOVERY_DOC = operation({
  summary: "Discovery document",
  description:
    "OpenID Connect Discovery and RFC 8414 metadata: every endpoint, grant and flag of the server; also at the " +
    "host's root under the path-inserted names (`/.well-known/oauth-authorization-server{issuer path}`).",
  answers: { 200: { description: "The server's metadata.", schema: discoverySchema } },
});

/** Under the issuer: both well-known names and the key set. */
export const discoveryRoutes = new Hono<AppEnv>()
  .get("/.well-known/openid-configuration", DISCOVERY_DOC, discovery)
  .get("/.well-known/oauth-authorization-server", DISCOVERY_DOC, discovery)
  .get(
    "/oauth2/jwks",
    operation({
      summary: "Signing keys of the authorization server",
      description: "The same key set as `/.well-known/jwks.json`: ID and access tokens verify with it.",
      answers: { 200: { description: "The key set.", schema: jwksSchema } },
    }),
    async (c) => {
      // The same key set as /.well-known/jwks.json, so a rotation shows in both at once.
      const { jwks } = await getKeySet(c.var.config);
      return c.json({ keys: jwks }, 200, { "Cache-Control": "public, max-age=300" });
    },
  );

/**
 * The discovery document at the host's root under the path-inserted names of RFC 8414 §3.1
 * (`/.well-known/oauth-authorization-server/auth/v1` for the issuer `…/auth/v1`): the first place the MCP SDK and
 * other RFC 8414 clients look. Mounted on the whole app; nothing when the issuer has no path (the issuer's own
 * well-known URLs are then the same).
 */
export function rootMetadataRoutes(config: Config) {
  const routes = new Hono<AppEnv>();
  const issuerPath = config.urls.authPath;
  if (!issuerPath) return routes;
  for (const name of ["oauth-authorization-server", "openid-configuration"]) {
    const path = `/.well-known/${name}${issuerPath}`;
    routes.use(path, cors({ origin: "*" }), requireEnabled).get(path, discovery);
  }
  return routes;
}
