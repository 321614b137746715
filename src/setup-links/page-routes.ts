import { type Context, Hono } from "hono";
import type { SetupLinkRow } from "../db/schema";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { connectionsOfLink, listDomains, TXT_PREFIX } from "../sso";
import { auditLink, checkDomain, claimDomain, makeScimToken, tokensOfLink } from "./actions";
import { checkToken, keepToken, linkOf, requireLink, type SetupEnv } from "./credential";
import { formOf, intentGuard, orgNameOf, otherSite, outcomeOf, type SetupCtx } from "./forms";
import { gonePage, setupPage, setupPath, wordsOf } from "./render";
import { domainsView, overviewView, scimView } from "./render-views";
import { ssoPageRoutes } from "./sso-page-routes";

/**
 * The setup link's hosted pages (contract operators.md §5), at `{prefix}/setup`: opening the link, the overview of
 * its steps, the domains and SCIM steps (SSO in ./sso-page-routes.ts). No account: the link (in its cookie) is the
 * credential, checked at every request; forms post same-origin only (login-CSRF style attacks on a cookie
 * credential), and every change answers with a redirect to the page that shows it (no form posted twice).
 */

const linkGuard = requireLink((c, check) =>
  gonePage(c, check.refused === "too-many" ? check.wait : undefined),
);

async function overview(c: SetupCtx) {
  const link = linkOf(c);
  const deps = c.var.deps;
  const [orgName, connections, tokens] = await Promise.all([
    orgNameOf(c),
    link.intents.includes("sso") ? connectionsOfLink(deps, link.orgId, link.id) : [],
    link.intents.includes("scim") ? tokensOfLink(deps, link) : [],
  ]);
  const { words, lang } = wordsOf(c);
  return setupPage(
    c,
    200,
    words.title(orgName),
    overviewView(c, { words, lang, link, orgName, connections, tokens }),
  );
}

async function domains(c: SetupCtx, status: 200 | 400 = 200) {
  const link: SetupLinkRow = linkOf(c);
  const { words, lang } = wordsOf(c);
  const rows = (await listDomains(c.var.deps, link.orgId)).filter((row) => link.claimed.includes(row.domain));
  const shown = rows.map((row) => ({
    domain: row.domain,
    verified: link.domains.includes(row.domain),
    txtName: `${TXT_PREFIX}.${row.domain}`,
    txtValue: row.txtValue,
  }));
  const query = { result: c.req.query("result"), domain: c.req.query("domain")?.slice(0, 253) };
  return setupPage(c, status, words.stepDomains, domainsView(c, { words, lang, domains: shown, ...query }));
}

async function scim(c: SetupCtx, token?: string, error?: string) {
  const link = linkOf(c);
  const { words, lang } = wordsOf(c);
  const tokens = await tokensOfLink(c.var.deps, link);
  const baseUrl = c.var.config.urls.auth("/scim/v2");
  if (token) c.header("Cache-Control", "no-store");
  return setupPage(c, 200, words.stepScim, scimView(c, { words, lang, baseUrl, token, tokens, error }));
}

const back = (c: SetupCtx, path: string, query: Record<string, string> = {}) => {
  const search = new URLSearchParams(query).toString();
  return c.redirect(`${setupPath(c, path)}${search ? `?${search}` : ""}`, 303);
};

export const setupPageRoutes = new Hono<SetupEnv>()
  .get("/setup/open", async (c) => {
    const token = (c.req.query("link") ?? "").slice(0, 200);
    const check = await checkToken(c as unknown as Context<AppEnv>, token);
    if (!("link" in check)) return gonePage(c, check.refused === "too-many" ? check.wait : undefined);
    keepToken(c as unknown as Context<AppEnv>, check.link, token);
    auditLink(c.var.deps, check.link, "opened");
    // On to the overview: the token leaves the address bar (and any Referer) now.
    return c.redirect(setupPath(c), 303);
  })
  .use("/setup", linkGuard)
  .use("/setup/*", async (c, next) => (c.req.path.endsWith("/setup/open") ? next() : linkGuard(c, next)))
  .get("/setup", overview)
  .use("/setup/domains", intentGuard("domains"))
  .use("/setup/domains/*", intentGuard("domains"))
  .use("/setup/scim", intentGuard("scim"))
  .get("/setup/domains", (c) => domains(c))
  .post("/setup/domains", async (c) => {
    const form = await formOf(c);
    if (!form) return otherSite(c);
    const domain = (form.get("domain") ?? "").trim().toLowerCase().slice(0, 253);
    try {
      const outcome = await claimDomain(c.var.deps, linkOf(c), domain);
      return back(c, "/domains", { result: outcome, domain });
    } catch (error) {
      return back(c, "/domains", { result: outcomeOf(error), domain });
    }
  })
  .post("/setup/domains/check", async (c) => {
    const form = await formOf(c);
    if (!form) return otherSite(c);
    const domain = (form.get("domain") ?? "").slice(0, 253);
    try {
      await checkDomain(c.var.deps, linkOf(c), domain);
      return back(c, "/domains", { result: "verified", domain });
    } catch (error) {
      // The resolver down or unreachable: the page says so and the IT admin checks again (nothing was changed).
      if (error instanceof AppError && error.reason?.startsWith("DNS resolver")) {
        return back(c, "/domains", { result: "dns-unavailable", domain });
      }
      return back(c, "/domains", { result: outcomeOf(error), domain });
    }
  })
  .get("/setup/scim", (c) => scim(c))
  .post("/setup/scim", async (c) => {
    const form = await formOf(c);
    if (!form) return otherSite(c);
    // Shown once, in this answer (no redirect: the token must not be kept anywhere to show it again).
    try {
      return await scim(c, await makeScimToken(c.var.deps, linkOf(c)));
    } catch (error) {
      outcomeOf(error);
      return scim(c, undefined, (error as Error).message);
    }
  })
  .route("/", ssoPageRoutes);
