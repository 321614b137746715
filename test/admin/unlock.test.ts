// An admin unlocking a user's sign-in (contract §13): `POST /admin/users/{id}/unlock` and the console's button. Threats:
// an unlock without the admin secret (or, in the console, from another site or without its CSRF token); an unlock
// that leaves a lock behind (the second factor's GuessGuard included); an unaudited unlock.
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { expectError, NO_VERIFICATION, PASSWORD, SERVER, service, signUp } from "../helpers";
import { userD1 } from "../support/shards";

const svc = service({ ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true" });
const SECRET = String(env.AUTH_ADMIN_SECRET);
const ADMIN = { "x-hasura-admin-secret": SECRET };
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;
const WRONG = "not the password at all";

const signIn = (email: string, password: string) => svc.post("/signin/email-password", { email, password });

async function lockPassword(email: string) {
  for (let i = 0; i < 10; i++) await signIn(email, WRONG);
  await expectError(await signIn(email, PASSWORD), 429, "account-locked");
}

const unlock = (id: string, headers: Record<string, string> = ADMIN) =>
  svc.request("POST", `/admin/users/${id}/unlock`, { headers });

async function adminEvents(userId: string) {
  const response = await svc.request("GET", `/admin/audit?userId=${userId}&type=admin.user.unlock`, {
    headers: ADMIN,
  });
  return ((await response.json()) as { items: { detail: Record<string, unknown> }[] }).items;
}

const postForm = (path: string, values: Record<string, string>, headers: Record<string, string>) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
  });

describe("admin API: unlock", () => {
  // ~12 argon2id checks: ~1.5 s on a quiet machine, several seconds on a busy one.
  it("unlocks the password at once (204), audited with the factors that were locked; 401 without the secret, 404 for nobody", async () => {
    const { user } = await signUp(svc);
    await lockPassword(user.email);
    await expectError(await unlock(user.id, {}), 401, "unauthorized");
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
    const answer = await unlock(user.id);
    expect(answer.status).toBe(204);
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    const [event] = await adminEvents(user.id);
    expect(event!.detail).toMatchObject({ factors: ["password"] });
    for (const id of [crypto.randomUUID(), "not-a-user", "x".repeat(300), "%2e%2e%2fkeys"]) {
      await expectError(await unlock(id), 404, "not-found");
    }
    // Nothing locked: still 204.
    expect((await unlock(user.id)).status).toBe(204);
  }, 30_000);

  it("also forgets the second factor's wrong codes (its GuessGuard lock)", async () => {
    const session = await signUp(svc);
    const generated = await svc.get("/mfa/totp/generate", session.accessToken);
    const secret = decodeBase32IgnorePadding(((await generated.json()) as { totpSecret: string }).totpSecret);
    const codeAt = () => totpCode(secret, totpStep(Date.now()));
    expect(
      (await svc.post("/user/mfa", { code: codeAt(), activeMfaType: "totp" }, session.accessToken)).status,
    ).toBe(200);
    await userD1(session.user.id)
      .prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?")
      .bind(session.user.id)
      .run();
    const ticket = async () =>
      ((await (await signIn(session.user.email, PASSWORD)).json()) as { mfa: { ticket: string } }).mfa.ticket;
    const wrong = String((Number(codeAt()) + 7) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++) {
      await expectError(
        await svc.post("/signin/mfa/totp", { ticket: await ticket(), otp: wrong }),
        401,
        "invalid-totp",
      );
    }
    await expectError(
      await svc.post("/signin/mfa/totp", { ticket: await ticket(), otp: codeAt() }),
      429,
      "too-many-requests",
    );
    expect((await unlock(session.user.id)).status).toBe(204);
    expect((await svc.post("/signin/mfa/totp", { ticket: await ticket(), otp: codeAt() })).status).toBe(200);
  }, 30_000);
});

describe("the console's unlock button", () => {
  it("shows the lock on the user's page and lifts it, only with the session's CSRF token from its own origin", async () => {
    const login = await postForm("/login", { secret: SECRET }, {});
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const { user } = await signUp(svc);
    await lockPassword(user.email);
    const page = await (await svc.request("GET", `${BASE}/users/${user.id}`, { headers: { cookie } })).text();
    expect(page).toContain("Sign-in lockout");
    expect(page).toMatch(
      /Password <span class="badge off">locked<\/span> until \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    expect(page).toContain(`action="${`/auth/v1${BASE}`}/users/${user.id}/unlock"`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    expect((await postForm(`/users/${user.id}/unlock`, { csrf: "forged" }, { cookie })).status).toBe(403);
    expect(
      (await postForm(`/users/${user.id}/unlock`, { csrf }, { cookie, origin: "https://evil.example" }))
        .status,
    ).toBe(403);
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
    const done = await postForm(`/users/${user.id}/unlock`, { csrf }, { cookie });
    expect(done.status).toBe(303);
    const after = await (
      await svc.request("GET", `${BASE}/users/${user.id}?done=unlocked`, { headers: { cookie } })
    ).text();
    expect(after).toContain("Every sign-in method of the user is unlocked.");
    expect(after).toContain("No sign-in method is locked.");
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    expect(await adminEvents(user.id)).toHaveLength(1);
  }, 30_000);
});
