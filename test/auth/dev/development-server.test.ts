// What a development server (loopback AUTH_SERVER_URL) does for a newcomer: links land on a page of the service while
// no AUTH_CLIENT_URL is set, `npm start` reads the resolved settings from /dev/about, and a browser call from an origin
// that is not allowed is logged once with the setting to change. None of it exists on a production server.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailbox, PASSWORD, SERVER, service, uniqueEmail, verifyPath } from "../../helpers";

const ISSUER = `${SERVER}/auth/v1`;
const PRODUCTION = { AUTH_SERVER_URL: "https://auth.example.com/auth/v1", AUTH_DEV_MAILBOX: "false" };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("links while no app exists (AUTH_CLIENT_URL never set)", () => {
  const fresh = service({ AUTH_CLIENT_URL: undefined });

  it("a verification link lands on the service's page, which says what happened and what an app receives", async () => {
    const email = uniqueEmail("landing");
    await fresh.post("/signup/email-password", { email, password: PASSWORD });
    const [mail] = await mailbox(fresh, email);
    const verified = await fresh.get(verifyPath(mail!));
    expect(verified.status).toBe(302);
    const landing = new URL(verified.headers.get("location")!);
    expect(`${landing.origin}${landing.pathname}`).toBe(`${ISSUER}/dev/landing`);
    expect(landing.searchParams.get("type")).toBe("emailVerify");
    const page = await fresh.get(`${landing.pathname.replace("/auth/v1", "")}${landing.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const text = await page.text();
    expect(text).toContain("The email address is verified and the user is signed in.");
    expect(text).toContain(landing.searchParams.get("refreshToken")!);
    expect(text).toContain("AUTH_CLIENT_URL");
  });

  it("an error lands there too, escaped", async () => {
    const page = await fresh.get("/dev/landing?error=invalid-ticket&errorDescription=%3Cb%3Eno%3C%2Fb%3E");
    const text = await page.text();
    expect(text).toContain("The link did not work");
    expect(text).toContain("&lt;b&gt;no&lt;/b&gt;");
    expect(text).not.toContain("<b>no</b>");
  });

  it("an app's own redirectTo is kept, and a set AUTH_CLIENT_URL is the default again", async () => {
    const email = uniqueEmail("landing-app");
    await fresh.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { redirectTo: "http://localhost:3000/welcome" },
    });
    const [mail] = await mailbox(fresh, email);
    const location = (await fresh.get(verifyPath(mail!))).headers.get("location")!;
    expect(location.startsWith("http://localhost:3000/welcome?")).toBe(true);

    const withApp = service({ AUTH_CLIENT_URL: "http://localhost:3000" });
    const other = uniqueEmail("landing-set");
    await withApp.post("/signup/email-password", { email: other, password: PASSWORD });
    const [otherMail] = await mailbox(withApp, other);
    const back = (await withApp.get(verifyPath(otherMail!))).headers.get("location")!;
    expect(back.startsWith("http://localhost:3000?") || back.startsWith("http://localhost:3000/?")).toBe(
      true,
    );
  });

  it("does not exist on a production server", async () => {
    const production = service({ ...PRODUCTION, AUTH_CLIENT_URL: undefined });
    expect((await production.get("/dev/landing")).status).toBe(404);
    expect((await production.get("/dev/about")).status).toBe(404);
  });
});

describe("/dev/about, read by npm start", () => {
  it("says what the Worker resolved: the allowed origins and the OAuth2 issuer", async () => {
    const svc = service({
      AUTH_CORS_ORIGINS: "http://127.0.0.1:5173,http://localhost:5173",
      AUTH_OAUTH2_PROVIDER_ENABLED: "true",
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
    });
    expect(await (await svc.get("/dev/about")).json()).toEqual({
      corsOrigins: ["http://127.0.0.1:5173", "http://localhost:5173"],
      clientUrl: "http://localhost:3000",
      oauth2: {
        enabled: true,
        issuer: ISSUER,
        discovery: `${SERVER}/.well-known/oauth-authorization-server/auth/v1`,
        registration: "open",
        devicePage: `${ISSUER}/oauth2/device`,
      },
    });
  });
});

describe("a browser call from an origin that is not allowed", () => {
  const call = (svc: ReturnType<typeof service>, origin: string) =>
    svc.request("OPTIONS", "/user", {
      headers: {
        origin,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });

  it("is refused, and on a development server logged once with the setting and the value to add", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const svc = service();
    const origin = `http://127.0.0.1:${3000 + Math.floor(Math.random() * 5000)}`;
    const refused = await call(svc, origin);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    await call(svc, origin);
    const lines = warn.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(origin));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "warn",
      what: "cors",
      detail: expect.stringContaining(`AUTH_CORS_ORIGINS='http://localhost:3000,${origin}'`),
    });
    // An allowed origin is answered, and not logged.
    const allowed = await call(svc, "http://localhost:3000");
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
  });

  it("storage refuses and logs the same way", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const origin = `http://127.0.0.1:${9000 + Math.floor(Math.random() * 900)}`;
    const response = await service().request("OPTIONS", `${SERVER}/storage/v1/files`, {
      headers: { origin, "access-control-request-method": "POST" },
    });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(warn.mock.calls.some(([line]) => String(line).includes(origin))).toBe(true);
  });

  it("is not logged on a production server (any site can make a visitor's browser try)", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const origin = `https://unknown-${crypto.randomUUID().slice(0, 8)}.example`;
    await call(service(PRODUCTION), origin);
    expect(warn.mock.calls.some(([line]) => String(line).includes(origin))).toBe(false);
  });
});
