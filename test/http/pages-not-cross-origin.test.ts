import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signedInBrowser } from "../account-center/security-support";
import { SERVER, service } from "../helpers";
import { PROVIDER_ON } from "../oauth2/support";

// Threat: a script on an allowed app origin of the same site (app.example.com beside auth.example.com: the pages'
// SameSite cookies are sent) reading a signed-in page across origins. The auth API's CORS answered every path with
// the app's origin and credentials, so such a script (an XSS on the app) read the console's pages whole while an
// operator was signed in — users, sessions, the audit, the form token — and the account center's pages as well.
// Pages and the console now carry no CORS; the API's JSON keeps it.

const svc = service(PROVIDER_ON);
const APP = { origin: "http://localhost:3000" };
const allowOrigin = (response: Response) => response.headers.get("access-control-allow-origin");

async function consoleCookie(): Promise<string> {
  const response = await svc.request("POST", "/admin/console/login", {
    body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
  });
  expect(response.status).toBe(303);
  return response.headers.get("set-cookie")!.split(";")[0]!;
}

describe("pages are never read across origins", () => {
  it("the console's pages and its CSV export carry no CORS for an allowed app origin", async () => {
    const cookie = await consoleCookie();
    for (const path of ["/admin/console/users", "/admin/console/users.csv"]) {
      const response = await svc.request("GET", path, { headers: { cookie, ...APP } });
      expect(response.status, path).toBe(200);
      expect(allowOrigin(response), path).toBeNull();
    }
    const preflight = await svc.request("OPTIONS", "/admin/console/users", {
      headers: { ...APP, "access-control-request-method": "GET" },
    });
    expect(allowOrigin(preflight)).toBeNull();
  });

  it("the account center's page carries none; the API beside it still answers the app with CORS", async () => {
    const { browser, api } = await signedInBrowser(svc, "cors");
    const page = await svc.request("GET", "/account", { headers: { cookie: browser.cookie, ...APP } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(allowOrigin(page)).toBeNull();
    const user = await svc.request("GET", "/user", { token: api.accessToken, headers: APP });
    expect(user.status).toBe(200);
    expect(allowOrigin(user)).toBe(APP.origin);
    expect(user.headers.get("access-control-allow-credentials")).toBe("true");
  });
});
