// The token vault's screens (contract operators.md §3): the account center lists the person's connected accounts and
// which apps used them (never a token); the console sets a client's vault providers (the admin API's
// `vaultProviders`), under its CSRF rule, keeping them through the client's own edit form.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signedInBrowser } from "../account-center/security-support";
import { SERVER, service } from "../helpers";
import { ADMIN } from "../oauth2/support";
import { agent, connect, exchangeForGoogle, googleAccount, userTokenFor, VAULT_ON } from "./support";

const svc = service({ ...VAULT_ON, AUTH_MFA_ENABLED: "true", AUTH_WEBAUTHN_ENABLED: "true" });
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const consolePost = (path: string, values: Record<string, string | string[]>, cookie: string) => {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    for (const one of Array.isArray(value) ? value : [value]) body.append(name, one);
  }
  return svc.request("POST", `${BASE}${path}`, {
    body: body.toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
  });
};

async function consoleSignIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await consolePost("/login", { secret: String(env.AUTH_ADMIN_SECRET) }, "");
  const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await svc.request("GET", BASE, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

const adminClient = async (clientId: string) =>
  (await (await svc.request("GET", `/admin/oauth2/clients/${clientId}`, { headers: ADMIN })).json()) as {
    vaultProviders: string[];
  };

describe("the token vault's screens", { timeout: 30_000 }, () => {
  it("the account center lists each connection and the apps that used it, never a token", async () => {
    const { browser, api } = await signedInBrowser(svc, "vault");
    const bot = await agent(svc);
    const idle = await agent(svc, { clientName: "Idle agent" });
    const person = googleAccount();
    await connect(svc, api, person, [bot.clientId, idle.clientId]);
    expect((await exchangeForGoogle(svc, bot, await userTokenFor(svc, bot, api))).status).toBe(200);
    const page = await (await browser.get("/account")).text();
    expect(page).toContain('href="#connections"');
    const section = page.slice(page.indexOf('<section id="connections"'));
    expect(section).toContain("Connected accounts");
    expect(section).toContain(person.fake_email);
    expect(section).toMatch(/Calendar agent <span class="muted">\(last used .+ \(1×\)\)<\/span>/);
    expect(section).toContain('Idle agent <span class="muted">(never used)</span>');
    // Threat: the page leaking the provider's tokens to whatever reads the DOM.
    expect(page).not.toMatch(/access-|refresh-/);
  });

  it("the console sets a client's vault providers, refuses a cross-site post, and its edit form keeps them", async () => {
    const { cookie, csrf } = await consoleSignIn();
    const bot = await agent(svc, { vaultProviders: [] });
    const path = `/clients/${encodeURIComponent(bot.clientId)}`;
    const screen = await svc.request("GET", `${BASE}${path}/vault`, { headers: { cookie } });
    expect(screen.status).toBe(200);
    const text = await screen.text();
    expect(text).toContain('value="google"');
    expect(text).toContain('value="github"');
    // Threat: a cross-site page making the admin's browser allow a client Google's tokens.
    expect((await consolePost(`${path}/vault`, { vaultProviders: "google" }, cookie)).status).toBe(403);
    expect((await adminClient(bot.clientId)).vaultProviders).toEqual([]);
    const saved = await consolePost(`${path}/vault`, { csrf, vaultProviders: ["google", "github"] }, cookie);
    expect(saved.status).toBe(303);
    expect((await adminClient(bot.clientId)).vaultProviders).toEqual(["google", "github"]);
    const refused = await consolePost(`${path}/vault`, { csrf, vaultProviders: "myspace" }, cookie);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("unknown providers: myspace");
    // The client's page links the screen and says what is set; its edit form leaves the providers as they are.
    const clientPage = await (await svc.request("GET", `${BASE}${path}`, { headers: { cookie } })).text();
    expect(clientPage).toContain("google, github");
    expect(clientPage).toContain(`${path}/vault`);
    const edited = await consolePost(
      `${path}/edit`,
      {
        csrf,
        clientName: "Renamed agent",
        redirectUris: "https://rp.example.com/callback",
        scopes: ["openid"],
        tokenEndpointAuthMethod: "client_secret_basic",
      },
      cookie,
    );
    expect(edited.status).toBe(303);
    expect((await adminClient(bot.clientId)).vaultProviders).toEqual(["google", "github"]);
  });
});
