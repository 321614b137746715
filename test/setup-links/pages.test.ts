import { describe, expect, it } from "vitest";
import { CATALOGUES, LANGUAGES } from "../../src/browser/text";
import { GUIDES } from "../../src/setup-links/guides";
import { signUp, uniqueAddress, uniqueEmail } from "../helpers";
import { ssoService } from "../sso/support";
import { Browser, makeLink } from "./support";

// Contract operators.md §5: the setup link's pages in every shipped language, in the deployment's brand, under the
// hosted pages' CSP (no script at all), with every guide's exact values; and what an org's name can't do to them.

const BRAND = "Acme Identity";
const svc = ssoService({ AUTH_BRAND_NAME: BRAND, AUTH_UI_LOCALES: LANGUAGES.join(",") });

async function orgNamed(name: string) {
  const owner = await signUp(svc, uniqueEmail("owner"));
  const created = await svc.post("/orgs", { name }, owner.accessToken);
  const { id } = (await created.json()) as { id: string };
  return { orgId: id, owner };
}

describe("the pages", () => {
  it("every step in every language: its words, the brand, the strict CSP, no script", async () => {
    const name = `Org <script>alert(1)</script> ${crypto.randomUUID().slice(0, 6)}`;
    const { orgId, owner } = await orgNamed(name);
    const link = await makeLink(svc, orgId, owner.accessToken);
    for (const language of LANGUAGES) {
      const words = CATALOGUES[language].setupLinks;
      const browser = new Browser(svc, uniqueAddress(), language);
      await browser.open(link.url);
      const pages: [string, string][] = [
        ["/setup", words.stepSso],
        ["/setup/domains", words.domainsLead],
        ["/setup/sso", words.ssoLead],
        ["/setup/scim", words.scimLead],
        ...GUIDES.map((guide): [string, string] => [
          `/setup/sso/new?idp=${guide.id}`,
          words.guideTitle(guide.name),
        ]),
      ];
      for (const [path, expected] of pages) {
        const response = await browser.get(path);
        const page = await response.text();
        const where = `${language} ${path}`;
        expect(response.status, where).toBe(200);
        expect(page, where).toContain(`<html lang="${language}">`);
        expect(page, where).toContain(escaped(expected));
        expect(page, where).toContain(BRAND);
        expect(page, where).not.toContain("<script");
        const csp = response.headers.get("content-security-policy")!;
        expect(csp, where).toMatch(
          /^default-src 'none'; style-src 'nonce-[0-9a-f]+'; form-action 'self'; frame-ancestors 'none'/,
        );
        expect(csp, where).not.toContain("script-src");
        expect(response.headers.get("cache-control"), where).toBe("no-store");
      }
    }
  });

  it("an unknown guide goes back to the choice; the refusal page speaks the reader's language too", async () => {
    const { orgId, owner } = await orgNamed("Plain org");
    const link = await makeLink(svc, orgId, owner.accessToken, { intents: ["sso"] });
    const browser = new Browser(svc, uniqueAddress(), "ja");
    await browser.open(link.url);
    const unknown = await browser.get("/setup/sso/new?idp=nonsense");
    expect(unknown.status).toBe(303);
    const refused = await new Browser(svc, uniqueAddress(), "de").get("/setup");
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain(CATALOGUES.de.setupLinks.gone);
    const step = await browser.get("/setup/domains");
    expect(step.status).toBe(403);
    expect(await step.text()).toContain(CATALOGUES.ja.setupLinks.notAllowed);
  });
});

/** How `html` escapes text in a page. */
function escaped(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
