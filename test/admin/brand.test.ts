// The brand of the built-in pages (contract §13): from the environment, or set in the console or the admin API, which
// wins field by field. Threats: a brand value that injects into every page (CSS through a colour, a script or
// tracking URL through the logo: only #rrggbb and https origins pass, and only the logo's origin may serve images);
// anyone but the operator changing what every sign-in page says (the admin secret, the console's CSRF token); a change
// no one can trace (audited). The setting is global: every test resets it, so other files see the configuration's.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { expectError, SERVER, signUp, type TestService } from "../helpers";
import { Browser, signIn } from "../oauth2/page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "../oauth2/support";

const SECRET = String(env.AUTH_ADMIN_SECRET);
const ADMIN = { "x-hasura-admin-secret": SECRET };
const ORIGIN = new URL(SERVER).origin;
const CONFIGURED = {
  AUTH_BRAND_NAME: "Env Co",
  AUTH_BRAND_LOGO_URL: "https://cdn.example.com/env-logo.png",
  AUTH_BRAND_COLOR: "#1a237e",
};

const plain = provider();
const configured = provider(CONFIGURED);

const admin = (svc: TestService, method: string, json?: unknown) =>
  svc.request(method, "/admin/brand", { headers: ADMIN, json });

// The setting is one row for the whole deployment: back to the configuration's after every test.
afterEach(async () => {
  expect((await admin(plain, "DELETE")).status).toBe(204);
});

/** The sign-in page of an OAuth2 request, as a browser gets it. */
async function signInPage(svc: TestService) {
  const client = await newClient(svc);
  const response = await authorize(svc, client);
  await requestIdOf(response);
  const page = await new Browser(svc).get(location(response).toString());
  expect(page.status).toBe(200);
  return { html: await page.text(), csp: page.headers.get("content-security-policy")! };
}

describe("the brand from the configuration", () => {
  it("without one, the pages keep the house style: no header, no image allowed, the house colours", async () => {
    const { html, csp } = await signInPage(plain);
    expect(html).toContain("<title>Sign in</title>");
    expect(html).not.toContain('class="brand"');
    expect(html).not.toContain("<img");
    expect(csp).not.toContain("img-src");
    expect(html).toContain("--brand: #1f4fc4; --on-brand: #ffffff;");
  });

  it("shows the configured name (header and title), logo (its origin alone allowed) and colour", async () => {
    const { html, csp } = await signInPage(configured);
    expect(html).toContain("<title>Sign in · Env Co</title>");
    expect(html).toContain(
      '<header class="brand"><img src="https://cdn.example.com/env-logo.png" alt="Env Co" referrerpolicy="no-referrer">',
    );
    expect(csp).toContain("img-src https://cdn.example.com");
    // Navy: white labels; links keep the navy on light pages and a lighter shade on dark ones.
    expect(html).toContain(":root { --brand: #1a237e; --on-brand: #ffffff; --accent: #1a237e; }");
    expect(html).toMatch(
      /prefers-color-scheme: dark\) \{ :root \{ --brand: #1a237e; --on-brand: #ffffff; --accent: #(?!1a237e)/,
    );
    const view = (await (await admin(configured, "GET")).json()) as Record<string, unknown>;
    expect(view).toEqual({
      brand: { name: "Env Co", logoUrl: CONFIGURED.AUTH_BRAND_LOGO_URL, color: "#1a237e", colorDark: null },
      console: null,
      configuration: {
        name: "Env Co",
        logoUrl: CONFIGURED.AUTH_BRAND_LOGO_URL,
        color: "#1a237e",
        colorDark: null,
      },
      updatedAt: null,
    });
  });

  it("names the brand in the sign-out question instead of the host", async () => {
    const { user } = await signUp(configured);
    const browser = new Browser(configured);
    const requestId = await requestIdOf(await authorize(configured, await newClient(configured)));
    await signIn(browser, requestId, user.email);
    const asked = await browser.get("/oauth2/logout");
    expect(asked.status).toBe(200);
    const page = await asked.text();
    expect(page).toContain("Sign out of Env Co?");
    expect(page).not.toContain("Sign out of localhost:8787?");
  });
});

describe("the brand set through the admin API", () => {
  it("wins over the configuration field by field, shows on the sign-in page at once, and is audited", async () => {
    const saved = await admin(configured, "PUT", { name: "Console Co", color: "#ffeb3b" });
    expect(saved.status).toBe(200);
    const view = (await saved.json()) as { brand: unknown; console: unknown; updatedAt: string };
    // The logo nobody set here stays the configuration's.
    expect(view.brand).toEqual({
      name: "Console Co",
      logoUrl: CONFIGURED.AUTH_BRAND_LOGO_URL,
      color: "#ffeb3b",
      colorDark: null,
    });
    expect(view.console).toEqual({ name: "Console Co", logoUrl: null, color: "#ffeb3b", colorDark: null });
    expect(Date.parse(view.updatedAt)).toBeGreaterThan(Date.now() - 60_000);

    const { html, csp } = await signInPage(configured);
    expect(html).toContain("<title>Sign in · Console Co</title>");
    expect(html).toContain('alt="Console Co"');
    expect(csp).toContain("img-src https://cdn.example.com");
    // A pale yellow: black labels, links darkened until they read.
    expect(html).toMatch(/\n {2}:root \{ --brand: #ffeb3b; --on-brand: #000000; --accent: #(?!ffeb3b)/);

    const events = await configured.request("GET", "/admin/audit?type=admin.brand.update&limit=5", {
      headers: ADMIN,
    });
    const items = ((await events.json()) as { items: { detail: Record<string, unknown> }[] }).items;
    expect(items[0]?.detail.brand).toEqual({
      name: "Console Co",
      logoUrl: null,
      color: "#ffeb3b",
      colorDark: null,
    });
  });

  it("a new logo's origin replaces the old one in the page's img-src; a reset goes back to the configuration", async () => {
    expect((await admin(configured, "PUT", { logoUrl: "https://img.example.org/brand/c.svg" })).status).toBe(
      200,
    );
    const changed = await signInPage(configured);
    expect(changed.csp).toContain("img-src https://img.example.org");
    expect(changed.csp).not.toContain("cdn.example.com");
    expect(changed.html).toContain('<img src="https://img.example.org/brand/c.svg" alt="Env Co"');

    expect((await admin(configured, "DELETE")).status).toBe(204);
    const back = (await (await admin(configured, "GET")).json()) as { console: unknown };
    expect(back.console).toBeNull();
    expect((await signInPage(configured)).html).toContain("env-logo.png");
    expect(
      (await configured.request("GET", "/admin/audit?type=admin.brand.reset&limit=1", { headers: ADMIN }))
        .status,
    ).toBe(200);
  });

  it("a brand set without any configuration shows on a deployment that has none", async () => {
    expect((await admin(plain, "PUT", { name: "Only Here", colorDark: "#8ab4f8" })).status).toBe(200);
    const { html, csp } = await signInPage(plain);
    expect(html).toContain('<header class="brand"><span>Only Here</span></header>');
    expect(csp).not.toContain("img-src");
    // Only a dark colour: light pages use it too, with their own link shade.
    expect(html).toContain("--brand: #8ab4f8; --on-brand: #000000;");
  });

  it("refuses what is not a name, an https logo or a #rrggbb colour with 400, and saves nothing", async () => {
    for (const body of [
      { color: "red" },
      { color: "#12345" },
      { color: "#1a73e8; background: url(https://evil.example/x)" },
      { colorDark: "1a73e8" },
      { logoUrl: "http://example.com/logo.png" },
      { logoUrl: "javascript:alert(1)" },
      { logoUrl: "data:image/svg+xml,<svg onload=alert(1)>" },
      { logoUrl: `https://cdn.example.com/${"a".repeat(2100)}` },
      { name: "" },
      { name: "x".repeat(81) },
      { name: 42 },
      { tagline: "unknown field" },
      ["not", "an", "object"],
    ]) {
      await expectError(await admin(plain, "PUT", body), 400, "invalid-request");
    }
    const notJson = await plain.request("PUT", "/admin/brand", {
      headers: { ...ADMIN, "content-type": "application/json" },
      body: "{nope",
    });
    expect(notJson.status).toBe(400);
    expect(((await (await admin(plain, "GET")).json()) as { console: unknown }).console).toBeNull();
  });

  it("answers only with the admin secret", async () => {
    expect((await plain.request("GET", "/admin/brand")).status).toBe(401);
    expect((await plain.request("PUT", "/admin/brand", { json: { name: "Mallory" } })).status).toBe(401);
    expect(
      (
        await plain.request("PUT", "/admin/brand", {
          json: { name: "Mallory" },
          headers: { "x-hasura-admin-secret": "no" },
        })
      ).status,
    ).toBe(401);
  });
});

describe("the console's Brand page", () => {
  const BASE = "/admin/console";
  const post = (path: string, values: Record<string, string>, cookie: string, origin = ORIGIN) =>
    plain.request("POST", `${BASE}${path}`, {
      body: new URLSearchParams(values).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie },
    });

  async function consoleSignIn(): Promise<string> {
    const response = await post("/login", { secret: SECRET }, "");
    expect(response.status).toBe(303);
    return response.headers.get("set-cookie")!.split(";")[0]!;
  }

  it("shows a preview, saves valid values, refuses invalid ones on the form, and resets", async () => {
    const cookie = await consoleSignIn();
    const page = await plain.request("GET", `${BASE}/brand`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain("<h1>Brand</h1>");
    expect(body).toContain('role="img"');
    expect(body).not.toContain("Reset to the configuration");
    const csrf = /name="csrf" value="([^"]+)"/.exec(body)![1]!;

    const refused = await post("/brand", { csrf, name: "Acme", color: "blue" }, cookie);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert">color: must be a colour like #1a73e8/);
    expect(((await (await admin(plain, "GET")).json()) as { console: unknown }).console).toBeNull();

    // A cross-site post, or one without the session's token, changes nothing.
    expect((await post("/brand", { csrf, name: "Forged" }, cookie, "https://evil.example")).status).toBe(403);
    expect((await post("/brand", { csrf: "forged", name: "Forged" }, cookie)).status).toBe(403);

    const saved = await post(
      "/brand",
      { csrf, name: "Acme", logoUrl: "https://cdn.example.com/acme.svg", color: "#1a73e8", colorDark: "" },
      cookie,
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`/auth/v1${BASE}/brand?done=brand-saved`);
    const after = await plain.request("GET", `${BASE}/brand?done=brand-saved`, { headers: { cookie } });
    expect(after.headers.get("content-security-policy")).toContain("img-src https://cdn.example.com");
    const afterHtml = await after.text();
    expect(afterHtml).toContain("every page shows it within 30 seconds");
    expect(afterHtml).toContain("Reset to the configuration");
    // The colour set in the console shows on the sign-in page.
    const { html } = await signInPage(plain);
    expect(html).toContain("<title>Sign in · Acme</title>");
    expect(html).toContain("--brand: #1a73e8; --on-brand: #ffffff;");

    const events = await plain.request("GET", "/admin/audit?type=admin.brand.update&limit=1", {
      headers: ADMIN,
    });
    expect(((await events.json()) as { items: unknown[] }).items).toHaveLength(1);

    const reset = await post("/brand/reset", { csrf }, cookie);
    expect(reset.status).toBe(303);
    expect((await signInPage(plain)).html).not.toContain("Acme");
  });
});
