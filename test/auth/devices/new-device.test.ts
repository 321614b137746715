// The new-device notice (contract §13) through the HTTP surface: who is mailed, when, in which language, and what a
// sign-in costs when the mail cannot go.
// Threats: a stranger who has the password signs in from their own browser and the user never hears of it; the
// opposite, a notice on every sign-in (nhost-js sends no cookie), which teaches users to ignore it; a mail that a
// stranger's User-Agent puts words into; a failing mail transport that turns a good sign-in into an error; a user
// moved from Nhost mailed "new device" on their first sign-in here; parallel sign-ins mailing twice.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import {
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  PREFIX,
  SERVER,
  service,
  type TestService,
  uniqueAddress,
  uniqueEmail,
  verifyPath,
} from "../../helpers";
import { importUsers, nhostBcrypt, nhostUser } from "../../move-in/support";
import { failingEmail } from "../../support/faults";
import { userD1 } from "../../support/shards";

const CHROME_MAC =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const CHROME_MAC_NEXT =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/132.0.0.0 Safari/537.36";
const FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

const svc = service({ ...NO_VERIFICATION, AUTH_LOCALE_ALLOWED_LOCALES: "en,de,fr" });

interface From {
  userAgent: string;
  address?: string;
  cookie?: string | null;
}

function headersOf(from: From): Record<string, string> {
  return {
    "user-agent": from.userAgent,
    ...(from.address ? { "cf-connecting-ip": from.address } : {}),
    ...(from.cookie ? { cookie: `edge_auth_device=${from.cookie}` } : {}),
  };
}

async function signUpFrom(from: From, email = uniqueEmail("device"), locale = "en", s: TestService = svc) {
  const response = await s.request("POST", "/signup/email-password", {
    json: { email, password: PASSWORD, options: { locale } },
    headers: headersOf(from),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { session } = (await response.json()) as { session: { user: { id: string } } };
  return { email, userId: session.user.id, cookie: deviceCookieOf(response) };
}

async function signInFrom(from: From, email: string, s: TestService = svc) {
  const response = await s.request("POST", "/signin/email-password", {
    json: { email, password: PASSWORD },
    headers: headersOf(from),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, cookie: deviceCookieOf(response) };
}

/** The device cookie an answer sets, or null. */
function deviceCookieOf(response: Response): string | null {
  const line = response.headers.getSetCookie().find((value) => value.startsWith("edge_auth_device="));
  return line ? line.slice("edge_auth_device=".length).split(";")[0]! : null;
}

const notices = async (email: string) =>
  (await mailbox(svc, email)).filter((mail) => /new device|neuen Gerät|nouvel appareil/.test(mail.text));

const devicesOf = async (userId: string) =>
  (await userD1(userId)
    .prepare("SELECT count(*) AS n FROM user_devices WHERE user_id = ?")
    .bind(userId)
    .first<{ n: number }>())!.n;

describe("the device cookie", () => {
  it("is set on a sign-in's answer: random, HttpOnly, SameSite=Lax, the API's path, 400 days; not on other answers", async () => {
    const response = await svc.request("POST", "/signup/email-password", {
      json: { email: uniqueEmail("device"), password: PASSWORD },
      headers: { "user-agent": CHROME_MAC },
    });
    expect(response.status).toBe(200);
    const line = response.headers.getSetCookie().find((value) => value.startsWith("edge_auth_device="))!;
    expect(line).toMatch(/^edge_auth_device=[A-Za-z0-9_-]{22};/);
    expect(line).toMatch(/; Max-Age=34560000/);
    expect(line).toMatch(/; Path=\/auth\/v1(;|$)/);
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    // http://localhost in tests: Secure only when the server's URL is https.
    expect(line).not.toMatch(/; Secure/);
    // A failed sign-in and an answer that is no sign-in set nothing.
    const wrong = await svc.post("/signin/email-password", {
      email: uniqueEmail(),
      password: "wrong password",
    });
    expect(wrong.status).toBe(401);
    expect(deviceCookieOf(wrong)).toBeNull();
    expect(deviceCookieOf(await svc.get("/healthz"))).toBeNull();
  });

  it("is set on a mailed link's redirect, which signs in the browser that opens it; a refresh is no sign-in", async () => {
    const links = service({ ...NO_VERIFICATION, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const { email } = await signUpFrom(
      { userAgent: CHROME_MAC, address: uniqueAddress() },
      undefined,
      "en",
      links,
    );
    expect((await links.post("/signin/passwordless/email", { email })).status).toBe(200);
    const [link] = (await mailbox(links, email)).filter((mail) => mail.text.includes("/verify?"));
    const opened = await links.request("GET", verifyPath(link!), {
      headers: { "user-agent": FIREFOX_WINDOWS },
    });
    expect(opened.status).toBe(302);
    expect(deviceCookieOf(opened)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // The browser that opened the link is new to the user: one notice.
    expect(await notices(email)).toHaveLength(1);
    const refreshToken = new URL(opened.headers.get("location")!).searchParams.get("refreshToken")!;
    const refreshed = await links.post("/token", { refreshToken });
    expect(refreshed.status).toBe(200);
    expect(deviceCookieOf(refreshed)).toBeNull();
  });

  it("keeps the browser's name: the same value comes back, and a value we did not make is replaced", async () => {
    const from = { userAgent: CHROME_MAC, address: uniqueAddress() };
    const { email, cookie } = await signUpFrom(from);
    expect((await signInFrom({ ...from, cookie }, email)).cookie).toBe(cookie);
    const forged = (await signInFrom({ ...from, cookie: "not-ours;<script>" }, email)).cookie;
    expect(forged).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(forged).not.toBe(cookie);
  });
});

describe("the new-device notice", () => {
  it("mails nothing for the first sign-in after sign-up, nor for the same device again", async () => {
    const from = { userAgent: CHROME_MAC, address: uniqueAddress() };
    const { email, cookie } = await signUpFrom(from);
    // An app on another origin: no cookie comes back, the same browser on the same network is the same device.
    await signInFrom(from, email);
    await signInFrom({ ...from, userAgent: CHROME_MAC_NEXT }, email);
    // The browser itself, with the cookie it was given, also from another network (a phone's data, a café).
    await signInFrom({ ...from, cookie }, email);
    await signInFrom({ userAgent: CHROME_MAC, address: uniqueAddress(), cookie }, email);
    expect(await notices(email)).toEqual([]);
  });

  it("mails the user once about a new browser, in their language, naming the device, with the account center's link", async () => {
    const address = uniqueAddress();
    const { email, userId } = await signUpFrom(
      { userAgent: CHROME_MAC, address },
      uniqueEmail("device"),
      "de",
    );
    const stranger = { userAgent: FIREFOX_WINDOWS, address: uniqueAddress() };
    const { cookie } = await signInFrom(stranger, email);
    const mails = await notices(email);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail!.subject).toBe("Neue Anmeldung bei Ihrem Konto");
    expect(mail!.text).toContain("Firefox unter Windows");
    expect(mail!.text).toContain("ein unbekannter Ort");
    expect(mail!.text).toMatch(/am \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(mail!.text).toContain("http://localhost:8787/auth/v1/account#sessions");
    expect(mail!.html).toContain('href="http://localhost:8787/auth/v1/account#sessions"');
    // The stranger's browser is now known, by its cookie and by its network: no second mail.
    await signInFrom({ ...stranger, cookie }, email);
    await signInFrom(stranger, email);
    expect(await notices(email)).toHaveLength(1);
    // Stored as keyed hashes only: neither the cookie nor the address is in the table.
    const { results } = await userD1(userId)
      .prepare("SELECT device_hash FROM user_devices WHERE user_id = ?")
      .bind(userId)
      .all<{ device_hash: string }>();
    expect(results.length).toBeGreaterThanOrEqual(3);
    for (const row of results) expect(row.device_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("names the place Cloudflare puts the address in (request.cf), as the user's language writes the rest", async () => {
    const { email } = await signUpFrom({ userAgent: CHROME_MAC, address: uniqueAddress() }, undefined, "fr");
    // The test helpers' requests carry no `cf`: this one is made as Cloudflare's edge hands it to the Worker.
    const ctx = createExecutionContext();
    const request = new Request(`${SERVER}${PREFIX}/signin/email-password`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headersOf({ userAgent: FIREFOX_WINDOWS }) },
      body: JSON.stringify({ email, password: PASSWORD }),
      cf: { city: "Lyon", region: "Auvergne-Rhône-Alpes", country: "FR" },
    } as RequestInit) as Request<unknown, IncomingRequestCfProperties>;
    const response = await worker.fetch!(request, svc.env, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status, await response.clone().text()).toBe(200);
    const [mail] = await notices(email);
    expect(mail!.subject).toBe("Nouvelle connexion à votre compte");
    expect(mail!.text).toContain("Firefox sous Windows, Lyon, Auvergne-Rhône-Alpes, FR, le ");
  });

  it("a known browser on a new network without its cookie is new; the same network (/24) is not", async () => {
    const { email } = await signUpFrom({ userAgent: CHROME_MAC, address: "198.51.100.17" });
    await signInFrom({ userAgent: CHROME_MAC, address: "198.51.100.200" }, email);
    expect(await notices(email)).toEqual([]);
    await signInFrom({ userAgent: CHROME_MAC, address: "203.0.113.5" }, email);
    expect(await notices(email)).toHaveLength(1);
  });

  it("names only browsers it knows: a User-Agent's own words never reach the mail", async () => {
    const { email } = await signUpFrom({ userAgent: CHROME_MAC, address: uniqueAddress() });
    await signInFrom({ userAgent: "All is fine, see https://evil.example", address: uniqueAddress() }, email);
    const [mail] = await notices(email);
    expect(mail!.text).toContain("an unknown browser, an unknown place");
    expect(mail!.text).not.toContain("evil.example");
  });

  it("parallel sign-ins from one new device mail once", async () => {
    const { email } = await signUpFrom({ userAgent: CHROME_MAC, address: uniqueAddress() });
    const stranger = { userAgent: FIREFOX_WINDOWS, address: uniqueAddress() };
    await Promise.all(Array.from({ length: 5 }, () => signInFrom(stranger, email)));
    expect(await notices(email)).toHaveLength(1);
  });

  it("does not count a personal access token's sign-in (a script's, from wherever it runs)", async () => {
    const from = { userAgent: CHROME_MAC, address: uniqueAddress() };
    const { email } = await signUpFrom(from);
    const { response } = await signInFrom(from, email);
    const { session } = (await response.json()) as { session: { accessToken: string } };
    const inOneDay = new Date(Date.now() + 86_400_000).toISOString();
    const created = await svc.post("/pat", { expiresAt: inOneDay }, session.accessToken);
    const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
    const ci = await svc.request("POST", "/signin/pat", {
      json: { personalAccessToken },
      headers: headersOf({ userAgent: "node", address: uniqueAddress() }),
    });
    expect(ci.status).toBe(200);
    expect(deviceCookieOf(ci)).toBeNull();
    expect(await notices(email)).toEqual([]);
  });

  it("records nothing for anonymous users and sets them no cookie", async () => {
    const anonymous = service({ ...NO_VERIFICATION, AUTH_ANONYMOUS_USERS_ENABLED: "true" });
    const response = await anonymous.request("POST", "/signin/anonymous", {
      json: {},
      headers: { "user-agent": CHROME_MAC },
    });
    expect(response.status).toBe(200);
    expect(deviceCookieOf(response)).toBeNull();
    const { session } = (await response.json()) as { session: { user: { id: string } } };
    expect(await devicesOf(session.user.id)).toBe(0);
  });
});

describe("a user moved from Nhost", () => {
  it("is not mailed for their first sign-in here, and is for a new browser after it", async () => {
    const { bundle, id, email } = await nhostUser({}, await nhostBcrypt(PASSWORD));
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "imported" }]);
    expect(await devicesOf(id)).toBe(0);
    await signInFrom({ userAgent: CHROME_MAC, address: uniqueAddress() }, email);
    expect(await notices(email)).toEqual([]);
    expect(await devicesOf(id)).toBeGreaterThan(0);
    await signInFrom({ userAgent: FIREFOX_WINDOWS, address: uniqueAddress() }, email);
    expect(await notices(email)).toHaveLength(1);
  });
});

describe("the mail transport failing", () => {
  it("does not fail the sign-in: 200 with a session, the failure logged", async () => {
    const { binding, fault } = failingEmail(env.CF_EMAIL, { times: 100 });
    const broken = service({
      ...NO_VERIFICATION,
      AUTH_DEV_MAILBOX: "false",
      EMAIL: binding,
      AUTH_SMTP_SENDER: "noreply@example.com",
    });
    const { email } = await signUpFrom(
      { userAgent: CHROME_MAC, address: uniqueAddress() },
      undefined,
      "en",
      broken,
    );
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const { response } = await signInFrom(
        { userAgent: FIREFOX_WINDOWS, address: uniqueAddress() },
        email,
        broken,
      );
      const body = (await response.json()) as { session: { accessToken: string } | null };
      expect(body.session?.accessToken).toEqual(expect.any(String));
      expect(fault.failures).toBe(1);
      expect(logged.mock.calls.some(([line]) => String(line).includes("new-device notice"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
  });
});
