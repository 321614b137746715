import { type Context, Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { bindBrowser } from "../http/browser-binding";
import { randomUuid } from "../lib/crypto";
import { claimReadyNotice, connectionsOfLink, SSO_REQUEST_LIFETIME_MS, startConnectionTest } from "../sso";
import { auditLink, createLinkConnection, linkConnection } from "./actions";
import { linkOf, type SetupEnv } from "./credential";
import { formOf, intentGuard, otherSite, outcomeOf, type SetupCtx } from "./forms";
import { guideOf } from "./guides";
import { mailOwnersReady } from "./owner-mail";
import { gonePage, setupPage, setupPath, wordsOf } from "./render";
import { chooseView, connectionView, guideView } from "./render-sso";

/**
 * The SSO step of the setup link's pages (contract operators.md §5): pick the IdP, read its guide (the exact values
 * to paste, under the id the connection will have), give back its metadata or issuer, then test the connection with
 * a real round trip. The connection stays off until an owner turns it on (src/sso/connections.ts refuses it before a
 * successful test); the owners are mailed when it is ready.
 */

const asApp = (c: SetupCtx) => c as unknown as Context<AppEnv>;

/** A connection not the link's (another org's, an existing one): the same page as a link that does not work. */
async function ownConnection(c: SetupCtx) {
  try {
    return await linkConnection(c.var.deps, linkOf(c), c.req.param("id") ?? "");
  } catch (error) {
    outcomeOf(error);
    return undefined;
  }
}

async function guidePage(
  c: SetupCtx,
  idp: string | undefined,
  connectionId: string,
  error?: string,
  kept = {},
): Promise<Response> {
  const guide = guideOf(idp);
  const { words } = wordsOf(c);
  if (!guide) return c.redirect(setupPath(c, "/sso"), 303);
  return setupPage(
    c,
    error ? 400 : 200,
    words.guideTitle(guide.name),
    guideView(c, { words, guide, connectionId, error, kept }),
  );
}

export const ssoPageRoutes = new Hono<SetupEnv>()
  .use("/setup/sso/*", intentGuard("sso"))
  .use("/setup/sso", intentGuard("sso"))
  .get("/setup/sso", async (c) => {
    const link = linkOf(c);
    const { words } = wordsOf(c);
    const connections = await connectionsOfLink(c.var.deps, link.orgId, link.id);
    return setupPage(
      c,
      200,
      words.stepSso,
      chooseView(c, { words, connections, noDomains: link.domains.length === 0 }),
    );
  })
  .get("/setup/sso/new", (c) => guidePage(c, c.req.query("idp"), randomUuid()))
  .post("/setup/sso", async (c) => {
    const form = await formOf(c);
    if (!form) return otherSite(c);
    const guide = guideOf(form.get("idp") ?? undefined);
    const connectionId = form.get("connectionId") ?? "";
    const given = (name: string) => (form.get(name) ?? "").trim() || undefined;
    const input =
      guide?.type === "oidc"
        ? {
            type: "oidc",
            issuer: given("issuer"),
            clientId: given("clientId"),
            clientSecret: given("clientSecret"),
          }
        : { type: "saml", metadataUrl: given("metadataUrl"), metadataXml: given("metadataXml") };
    try {
      const row = await createLinkConnection(c.var.deps, linkOf(c), connectionId, input);
      return c.redirect(setupPath(c, `/sso/${row.id}`), 303);
    } catch (error) {
      outcomeOf(error);
      // Back to the same guide under the same id, what was typed kept (never the secret).
      const kept = {
        metadataUrl: given("metadataUrl"),
        metadataXml: given("metadataXml"),
        issuer: given("issuer"),
        clientId: given("clientId"),
      };
      const message = (error as Error).message;
      return guidePage(c, guide?.id, connectionId, message, kept);
    }
  })
  .get("/setup/sso/:id", async (c) => {
    const row = await ownConnection(c);
    if (!row) return gonePage(c);
    const { words, lang } = wordsOf(c);
    const guide = guideOf(row.type)!;
    return setupPage(
      c,
      200,
      words.connectionTitle(row.type.toUpperCase()),
      connectionView(c, { words, lang, row, guide }),
    );
  })
  .get("/setup/sso/:id/test", async (c) => {
    const row = await ownConnection(c);
    if (!row) return gonePage(c);
    // The round trip is bound to this browser as a sign-in is (the `sso-flow` cookie): a stolen URL finishes nothing.
    const browserHash = await bindBrowser(asApp(c), "sso-flow", SSO_REQUEST_LIFETIME_MS / 1000);
    const returnTo = c.var.config.urls.auth(`/setup/sso/${row.id}/tested`);
    const url = await startConnectionTest(c.var.deps, row, browserHash, returnTo);
    auditLink(c.var.deps, linkOf(c), "connection-test-started", { connectionId: row.id });
    return c.redirect(url, 302);
  })
  .get("/setup/sso/:id/tested", async (c) => {
    const row = await ownConnection(c);
    if (!row) return gonePage(c);
    const deps = c.var.deps;
    const test = (row.lastTest ?? {}) as { ok?: boolean; email?: string; error?: string };
    auditLink(deps, linkOf(c), "connection-tested", {
      connectionId: row.id,
      ok: test.ok === true,
      ...(test.error ? { error: test.error } : {}),
    });
    if (await claimReadyNotice(deps, row.id)) await mailOwnersReady(deps, row, test.email ?? "");
    return c.redirect(setupPath(c, `/sso/${row.id}`), 303);
  });
