import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { bindBrowser, browserBinding } from "../http/browser-binding";
import { operation, REDIRECT_ANSWER } from "../http/documented";
import { actorOf, refuseWhileImpersonating } from "../http/impersonation";
import { jsonBody } from "../http/validation";
import { withQuery } from "../lib/redirect";
import { answerOperation, askFirst, claimConnection, followAnswer, REQUEST_LIFETIME_MS } from "../providers";
import { beginConnection, completeConnection, connectionPath, disconnect, vaultProvider } from "./connect";
import { connectionsOf } from "./store";

/**
 * The token vault's routes (contract operators.md §3): the signed-in user connects, lists and removes accounts
 * with their own access token; the browser makes the trip to the provider through the start URL and the callback.
 */

const connectBody = z.strictObject({
  redirectTo: z.string().max(2048).optional().describe("Where the browser lands after (allow-listed)"),
  clientIds: z
    .array(z.string().min(1).max(2048))
    .max(10)
    .optional()
    .describe("OAuth2 clients the user lets use the connection (each allowed the provider by an admin)"),
});

const connectionSchema = z.object({
  provider: z.string(),
  providerUserId: z.string(),
  email: z.string().nullable(),
  scopes: z.array(z.string()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  clients: z.array(
    z.object({
      clientId: z.string(),
      clientName: z.string(),
      grantedAt: z.iso.datetime(),
      lastUsedAt: z.iso.datetime().nullable(),
      uses: z.number().int(),
    }),
  ),
});

/**
 * A connection is a grant of the user's: an impersonated session makes none and removes none (operators.md §1).
 * The token check refuses every write of such a session too; this names the rule where the grant is made.
 */
function refuseImpersonation(auth: { act?: unknown } | null) {
  refuseWhileImpersonating(actorOf(auth), "connecting or removing an account");
}

/** The callback's parameters, as a provider sends them (the query of a GET). */
function callbackParams(url: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of new URL(url).searchParams)
    if (!(name in params)) params[name] = value.slice(0, 8192);
  return params;
}

export const vaultRoutes = new Hono<AppEnv>()
  .get(
    "/user/connections",
    operation({
      summary: "The user's connected accounts",
      description:
        "The token vault (docs/agents.md): each provider account the signed-in user connected, its scopes, and the " +
        "OAuth2 clients the user let use it with their last use. Never a token. 409 `disabled-endpoint` when the " +
        "vault is off.",
      security: "bearer",
      answers: {
        200: { description: "The connections.", schema: z.object({ items: z.array(connectionSchema) }) },
      },
    }),
    requireAuth,
    async (c) => {
      if (!c.var.config.vault.enabled)
        throw new AppError("disabled-endpoint", "the token vault is not enabled");
      return c.json({ items: await connectionsOf(c.var.deps, c.var.auth!.sub) });
    },
  )
  .post(
    "/user/connections/:provider",
    operation({
      summary: "Connect a provider account",
      description:
        "Starts a connection for the signed-in user: `url` is a start URL of this service to open in the user's " +
        "browser (once, within ten minutes); it goes on to the provider's consent with the vault's scopes and offline " +
        "access, and lands on `redirectTo` with `connected=<provider>` (or `error`). `clientIds` are the OAuth2 " +
        "clients the user lets use it. 403 `forbidden` from an impersonated session; 409 when the vault or the " +
        "provider is off.",
      security: "bearer",
      answers: { 200: { description: "The start URL.", schema: z.object({ url: z.string() }) } },
    }),
    requireAuth,
    jsonBody(connectBody),
    async (c) => {
      refuseImpersonation(c.var.auth);
      const answer = await beginConnection(
        c.var.deps,
        c.var.auth!.sub,
        c.req.param("provider"),
        c.req.valid("json"),
      );
      return c.json(answer);
    },
  )
  .delete(
    "/user/connections/:provider",
    operation({
      summary: "Remove a connected account",
      description:
        "Forgets the connection and every client's use of it, and revokes it at the provider where the provider " +
        "has an RFC 7009 endpoint (`revokedAtProvider`). 404 `not-found` when there is none.",
      security: "bearer",
      answers: {
        200: { description: "Removed.", schema: z.object({ revokedAtProvider: z.boolean() }) },
      },
    }),
    requireAuth,
    async (c) => {
      refuseImpersonation(c.var.auth);
      return c.json(await disconnect(c.var.deps, c.var.auth!.sub, c.req.param("provider")));
    },
  )
  .get(
    "/user/connections/:provider/start",
    operation({
      summary: "Open a connection in this browser",
      description:
        "The URL `POST /user/connections/{provider}` gave: binds this browser (a cookie) and asks the person " +
        "whether to connect their provider account to the account named; the page's form (`POST` here) goes on to " +
        "the provider. Opened a second time, or after ten minutes: 400 `invalid-state`.",
      answers: {
        200: { description: "The question, naming the account.", media: "html" },
      },
    }),
    async (c) => {
      const provider = c.req.param("provider");
      vaultProvider(c.var.deps, provider);
      const browserHash = await bindBrowser(c, "provider-flow", REQUEST_LIFETIME_MS / 1000);
      const claimed = await claimConnection(
        c.var.deps,
        provider,
        c.req.query("state") ?? "",
        browserHash,
        c.var.config.urls.auth(connectionPath(provider, "callback")),
      );
      if (!claimed) throw new AppError("invalid-state");
      // Link CSRF: the start URL is the account's, not this browser's; the person says it is theirs first.
      return askFirst(c, {
        kind: "connection",
        provider,
        userId: claimed.userId,
        url: claimed.url,
        returnTo: claimed.returnTo,
        browserHash,
        action: `${c.var.config.urls.authPath}${connectionPath(provider, "start")}`,
      });
    },
  )
  .post(
    "/user/connections/:provider/start",
    answerOperation(
      "Answer the question of a connection",
      "The form of the start URL's page: on to the provider's consent.",
    ),
    followAnswer,
  )
  .get(
    "/user/connections/:provider/callback",
    operation({
      summary: "A connection's return from the provider",
      description:
        "The provider's redirect URI for the vault (register it at the provider beside the sign-in's). Only the " +
        "browser that opened the start URL completes it; the browser lands on the connection's `redirectTo`.",
      answers: { 302: REDIRECT_ANSWER("To `redirectTo`, with `connected` or `error`.") },
    }),
    async (c) => {
      const provider = c.req.param("provider");
      const { deps } = c.var;
      if (!deps.config.vault.enabled) {
        return c.redirect(withQuery(deps.config.urls.defaultRedirect, { error: "disabled-endpoint" }), 302);
      }
      const browserHash = await browserBinding(c, "provider-flow");
      return c.redirect(
        await completeConnection(deps, provider, callbackParams(c.req.url), browserHash),
        302,
      );
    },
  );
