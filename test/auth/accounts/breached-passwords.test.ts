// Breached passwords (contract auth.md §13), against a fake Pwned Passwords range API on loopback reached by the
// service's real outbound fetch (test/fakes/pwned-passwords.ts). Threats: credential stuffing with passwords from
// known breaches (refused on sign-up, change and reset); the check itself leaking the password or its hash to the
// third party (only 5 hex digits of the SHA-1 may leave, with `Add-Padding` so the answer's size says nothing); an
// outage of that third party stopping every sign-up (fail open, with a warning in the log).
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import type { RangeRequest } from "../../fakes/pwned-passwords";
import { expectError, mailbox, service, signUp, uniqueEmail, verifyPath } from "../../helpers";

const RANGE_API = inject("pwnedPasswordsUrl");

/** The service as production runs it: HIBP on, its calls really leaving (to loopback). */
const hibpService = (rangeUrl: string) =>
  service({
    OUTBOUND: undefined,
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
    AUTH_PASSWORD_HIBP_ENABLED: "true",
    AUTH_PASSWORD_HIBP_URL: rangeUrl,
  });
const svc = hibpService(`${RANGE_API}/range`);

async function sha1Of(password: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(password));
  return [...new Uint8Array(digest)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase();
}

/** A password of this test's own that the fake lists as breached (`count` times; 0: a padding line), and its SHA-1. */
async function breachedPassword(count = 42): Promise<{ password: string; sha1: string }> {
  const password = `breached ${crypto.randomUUID()}`;
  const sha1 = await sha1Of(password);
  const added = await fetch(`${RANGE_API}/__breached`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sha1, count }),
  });
  expect(added.status).toBe(201);
  return { password, sha1 };
}

async function rangeRequestsFor(sha1: string): Promise<RangeRequest[]> {
  return (await (await fetch(`${RANGE_API}/__received?prefix=${sha1.slice(0, 5)}`)).json()) as RangeRequest[];
}

/** Each range request carried the 5-hex prefix and nothing more of the password, with padding asked for. */
function expectOnlyThePrefix(requests: RangeRequest[], sha1: string, password: string) {
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    expect(request.method).toBe("GET");
    expect(request.path).toMatch(new RegExp(`/range/${sha1.slice(0, 5)}$`, "i"));
    expect(request.query).toBe("");
    expect(request.headers["add-padding"]).toBe("true");
    const sent = JSON.stringify(request).toUpperCase();
    expect(sent).not.toContain(sha1.slice(5));
    expect(sent).not.toContain(password.toUpperCase());
  }
}

const uniquePassword = () => `fine ${crypto.randomUUID()}`;

afterEach(() => vi.restoreAllMocks());

describe("breached passwords, over the wire", () => {
  it("refuses a breached password at sign-up with 400 password-in-hibp-database, sending only the prefix", async () => {
    const { password, sha1 } = await breachedPassword();
    await expectError(
      await svc.post("/signup/email-password", { email: uniqueEmail(), password }),
      400,
      "password-in-hibp-database",
    );
    expectOnlyThePrefix(await rangeRequestsFor(sha1), sha1, password);
  });

  it("accepts a password not in the range's answer, and one whose suffix is only padding (count 0)", async () => {
    const password = uniquePassword();
    const sha1 = await sha1Of(password);
    await signUp(svc, uniqueEmail(), undefined, password);
    expectOnlyThePrefix(await rangeRequestsFor(sha1), sha1, password);
    const padded = await breachedPassword(0);
    await signUp(svc, uniqueEmail(), undefined, padded.password);
    expectOnlyThePrefix(await rangeRequestsFor(padded.sha1), padded.sha1, padded.password);
  });

  it("refuses a breached password on a change", async () => {
    const session = await signUp(svc, uniqueEmail(), undefined, uniquePassword());
    const { password, sha1 } = await breachedPassword();
    await expectError(
      await svc.post("/user/password", { newPassword: password }, session.accessToken),
      400,
      "password-in-hibp-database",
    );
    expectOnlyThePrefix(await rangeRequestsFor(sha1), sha1, password);
  });

  it("refuses a breached password on a reset, and the ticket survives for a good one", async () => {
    const email = uniqueEmail();
    const first = await signUp(svc, email, undefined, uniquePassword());
    await svc.post("/user/password/reset", { email });
    const [mail] = await mailbox(svc, email);
    const ticket = new URLSearchParams(verifyPath(mail!).split("?")[1]).get("ticket")!;
    const { password, sha1 } = await breachedPassword();
    await expectError(
      await svc.post("/user/password", { newPassword: password, ticket }),
      400,
      "password-in-hibp-database",
    );
    expectOnlyThePrefix(await rangeRequestsFor(sha1), sha1, password);
    // Refused before the ticket was spent: the owner tries again with a better password.
    expect(await (await svc.post("/user/password", { newPassword: uniquePassword(), ticket })).json()).toBe(
      "OK",
    );
    expect((await svc.post("/token", { refreshToken: first.refreshToken })).status).toBe(401);
  });
});

describe("breached passwords when the range API is unreachable (fail open)", () => {
  // A refused connection takes the same path (the fetch throws inside the same `try`), but workerd prints its own
  // uncaught-promise lines for it, and the suite prints nothing for a passing test: the 503 stands for both.
  it("accepts the password and logs a warning when the API answers 503", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const down = hibpService(`${RANGE_API}/down/range`);
    const { password, sha1 } = await breachedPassword();
    const response = await down.post("/signup/email-password", { email: uniqueEmail(), password });
    expect(response.status).toBe(200);
    expect((await rangeRequestsFor(sha1)).map((request) => request.path)).toEqual([
      `/down/range/${sha1.slice(0, 5)}`,
    ]);
    // The warning names the request it happened in (its X-Request-Id), so an operator finds the sign-up it let through.
    const line = warn.mock.calls
      .map((call) => String(call[0]))
      .find((text) => text.includes("hibp-unavailable"));
    expect(JSON.parse(line ?? "{}")).toMatchObject({
      what: "hibp-unavailable",
      requestId: response.headers.get("x-request-id"),
    });
  });
});
