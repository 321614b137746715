// A password change or reset signs out the other sessions by default (contract auth.md §13, body field
// `signOutOthers`, default true). Threat: someone who learnt the old password (or stole a session) keeps a session
// after the owner changed or reset it. `signOutOthers: false` keeps the owner's other devices signed in, but never
// the credentials someone else may hold (PATs), and never on the first proof of an address (account pre-hijacking).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";

const NEW_PASSWORD = "a brand new password";

/** Verification off: a change with a bearer. */
const svc = service(NO_VERIFICATION);
/** Verification on: an account whose address the sign-up mail proved, for resets that prove nothing new. */
const verifying = service();

async function signIn(on: typeof svc, email: string): Promise<WireSession> {
  const response = await on.post("/signin/email-password", { email, password: PASSWORD });
  const body = (await response.json()) as { session: WireSession };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.session;
}

const refreshes = async (on: typeof svc, refreshToken: string) =>
  (await on.post("/token", { refreshToken })).status;

async function patOf(session: WireSession): Promise<string> {
  const response = await svc.post(
    "/pat",
    { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    session.accessToken,
  );
  return ((await response.json()) as { personalAccessToken: string }).personalAccessToken;
}

/** A verified account with two sessions and the `passwordReset:` ticket of a reset mail. */
async function verifiedUserWithResetTicket() {
  const email = uniqueEmail();
  expect((await verifying.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
  const verified = await follow(verifying, verifyPath((await mailbox(verifying, email))[0]!));
  expect(verified.get("refreshToken")).toBeTruthy();
  const sessions = [await signIn(verifying, email), await signIn(verifying, email)];
  await verifying.post("/user/password/reset", { email });
  const [mail] = await mailbox(verifying, email);
  const ticket = new URLSearchParams(verifyPath(mail!).split("?")[1]).get("ticket")!;
  return { email, sessions, ticket };
}

describe("password change with an access token", () => {
  it("signs out every other session by default and keeps the caller's", async () => {
    const email = uniqueEmail();
    const other = await signUp(svc, email);
    const mine = await signIn(svc, email);
    const changed = await svc.post("/user/password", { newPassword: NEW_PASSWORD }, mine.accessToken);
    expect(await changed.json()).toBe("OK");
    await expectError(
      await svc.post("/token", { refreshToken: other.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    expect(await refreshes(svc, mine.refreshToken)).toBe(200);
  });

  it("with signOutOthers: false keeps the other sessions, but PATs end all the same", async () => {
    const email = uniqueEmail();
    const other = await signUp(svc, email);
    const mine = await signIn(svc, email);
    const pat = await patOf(mine);
    const changed = await svc.post(
      "/user/password",
      { newPassword: NEW_PASSWORD, signOutOthers: false },
      mine.accessToken,
    );
    expect(await changed.json()).toBe("OK");
    expect(await refreshes(svc, other.refreshToken)).toBe(200);
    expect(await refreshes(svc, mine.refreshToken)).toBe(200);
    await expectError(await svc.post("/signin/pat", { personalAccessToken: pat }), 401, "invalid-pat");
  });

  // Threat: a stolen access token outliving the owner's fix. Its session ended with the password change, but for the
  // token's few minutes it still minted a PAT that never expires, changed the address, and changed the password back
  // (ending the owner's own session). Credential changes now need the token's session live and its user enabled.
  it("the other sessions' access tokens change no credential once signed out, nor a disabled user's", async () => {
    const email = uniqueEmail();
    const stolen = await signUp(svc, email);
    const mine = await signIn(svc, email);
    expect(
      await (await svc.post("/user/password", { newPassword: NEW_PASSWORD }, mine.accessToken)).json(),
    ).toBe("OK");
    const far = new Date(Date.now() + 365 * 86_400_000).toISOString();
    const attempts: [string, unknown][] = [
      ["/pat", { expiresAt: far }],
      ["/user/email/change", { newEmail: uniqueEmail("thief") }],
      ["/user/password", { newPassword: "the thief's own password" }],
    ];
    for (const [path, body] of attempts) {
      await expectError(await svc.post(path, body, stolen.accessToken), 401, "unauthorized");
    }
    // The owner's session and new password are untouched.
    expect(await refreshes(svc, mine.refreshToken)).toBe(200);
    expect((await svc.post("/signin/email-password", { email, password: NEW_PASSWORD })).status).toBe(200);
    // A disabled user's live token changes nothing either.
    const disabled = await svc.request("PATCH", `/admin/users/${mine.user.id}`, {
      json: { disabled: true },
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    expect(disabled.status).toBe(200);
    await expectError(await svc.post("/pat", { expiresAt: far }, mine.accessToken), 401, "unauthorized");
  });

  it("refuses a signOutOthers that is not a boolean (400), changing nothing", async () => {
    const email = uniqueEmail();
    const other = await signUp(svc, email);
    const mine = await signIn(svc, email);
    await expectError(
      await svc.post("/user/password", { newPassword: NEW_PASSWORD, signOutOthers: "no" }, mine.accessToken),
      400,
      "invalid-request",
    );
    expect(await refreshes(svc, other.refreshToken)).toBe(200);
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
  });
});

// Each of these signs up, verifies, signs in twice and resets: a dozen password hashes, slow on a busy machine.
describe("password reset with a ticket (no session of its own)", { timeout: 15_000 }, () => {
  it("signs out every session by default", async () => {
    const { email, sessions, ticket } = await verifiedUserWithResetTicket();
    expect(await (await verifying.post("/user/password", { newPassword: NEW_PASSWORD, ticket })).json()).toBe(
      "OK",
    );
    for (const session of sessions) {
      await expectError(
        await verifying.post("/token", { refreshToken: session.refreshToken }),
        401,
        "invalid-refresh-token",
      );
    }
    expect((await verifying.post("/signin/email-password", { email, password: NEW_PASSWORD })).status).toBe(
      200,
    );
  });

  it("with signOutOthers: false keeps the sessions", async () => {
    const { sessions, ticket } = await verifiedUserWithResetTicket();
    const reset = await verifying.post("/user/password", {
      newPassword: NEW_PASSWORD,
      ticket,
      signOutOthers: false,
    });
    expect(await reset.json()).toBe("OK");
    for (const session of sessions) expect(await refreshes(verifying, session.refreshToken)).toBe(200);
  });

  // Threat: account pre-hijacking. Someone signed up the victim's address before the victim; the victim's reset is
  // the first proof of the address, and the squatter's session must end whatever the body asks.
  it("ends every session on the first proof of an address, even with signOutOthers: false", async () => {
    const email = uniqueEmail();
    const squatter = await signUp(svc, email);
    await svc.post("/user/password/reset", { email });
    const [mail] = await mailbox(svc, email);
    const ticket = new URLSearchParams(verifyPath(mail!).split("?")[1]).get("ticket")!;
    const reset = await svc.post("/user/password", {
      newPassword: NEW_PASSWORD,
      ticket,
      signOutOthers: false,
    });
    expect(await reset.json()).toBe("OK");
    await expectError(
      await svc.post("/token", { refreshToken: squatter.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });
});
