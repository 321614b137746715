import { describe, expect, it } from "vitest";
import { expectError, NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../../helpers";

const svc = service(NO_VERIFICATION);
const signUpWith = (body: unknown, s = svc) => s.post("/signup/email-password", body);

describe("POST /signup/email-password", () => {
  it("creates the user with the contract's defaults and answers {session}", async () => {
    const email = uniqueEmail();
    const response = await signUpWith({ email, password: PASSWORD });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const { session } = (await response.json()) as { session: Record<string, unknown> & { user: object } };
    expect(session).toMatchObject({
      accessTokenExpiresIn: 900,
      refreshToken: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(session.user).toEqual({
      id: expect.any(String),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      displayName: email,
      avatarUrl: "",
      locale: "en",
      email,
      emailVerified: false,
      phoneNumberVerified: false,
      defaultRole: "user",
      roles: ["user", "me"],
      isAnonymous: false,
      activeMfaType: null,
      metadata: {},
    });
  });

  it("applies the options: roles, default role, display name, allowed locale, metadata", async () => {
    const s = service({ ...NO_VERIFICATION, AUTH_LOCALE_ALLOWED_LOCALES: "en,fr" });
    const session = await signUp(s, uniqueEmail(), {
      allowedRoles: ["me"],
      defaultRole: "me",
      displayName: "Zoë O'Neil-Smith",
      locale: "fr",
      metadata: { plan: "pro" },
    });
    expect(session.user).toMatchObject({
      roles: ["me"],
      defaultRole: "me",
      displayName: "Zoë O'Neil-Smith",
      locale: "fr",
      metadata: { plan: "pro" },
    });
  });

  it("falls back to the default locale for a locale that is not allowed", async () => {
    const session = await signUp(
      service({ ...NO_VERIFICATION, AUTH_LOCALE_ALLOWED_LOCALES: "en,fr" }),
      uniqueEmail(),
      {
        locale: "de",
      },
    );
    expect(session.user.locale).toBe("en");
  });

  it("stores emails lower-cased, so case variants are the same account", async () => {
    const email = uniqueEmail("Mixed.Case");
    await signUp(svc, email);
    await expectError(
      await signUpWith({ email: email.toUpperCase(), password: PASSWORD }),
      409,
      "email-already-in-use",
    );
  });

  it("answers 409 email-already-in-use for a taken email, also when two sign-ups race", async () => {
    const email = uniqueEmail();
    const results = await Promise.all([1, 2, 3].map(() => signUpWith({ email, password: PASSWORD })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });

  it("answers 403 signup-disabled when sign-up is off, before anything else", async () => {
    const s = service({ AUTH_DISABLE_SIGNUP: "true" });
    await expectError(await signUpWith({ email: uniqueEmail(), password: "x" }, s), 403, "signup-disabled");
  });

  it("answers 401 invalid-email-password for blocked emails and domains, and outside an allow-list", async () => {
    const blocked = service({ AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS: "blocked.example" });
    await expectError(
      await signUpWith({ email: "a@blocked.example", password: PASSWORD }, blocked),
      401,
      "invalid-email-password",
    );
    const allowList = service({ AUTH_ACCESS_CONTROL_ALLOWED_EMAIL_DOMAINS: "corp.example" });
    await expectError(
      await signUpWith({ email: uniqueEmail(), password: PASSWORD }, allowList),
      401,
      "invalid-email-password",
    );
    const ok = await signUpWith(
      { email: `u-${crypto.randomUUID().slice(0, 6)}@corp.example`, password: PASSWORD },
      allowList,
    );
    expect(ok.status).toBe(200);
  });

  it("answers 400 password-too-short below AUTH_PASSWORD_MIN_LENGTH (default 9)", async () => {
    const body = await expectError(
      await signUpWith({ email: uniqueEmail(), password: "12345678" }),
      400,
      "password-too-short",
    );
    expect(body.message).toContain("9");
    expect((await signUpWith({ email: uniqueEmail(), password: "123456789" })).status).toBe(200);
  });

  it("answers 400 redirectTo-not-allowed for a redirect outside the allow-list", async () => {
    await expectError(
      await signUpWith({
        email: uniqueEmail(),
        password: PASSWORD,
        options: { redirectTo: "https://evil.example" },
      }),
      400,
      "redirectTo-not-allowed",
    );
  });

  it("answers 400 role-not-allowed and default-role-must-be-in-allowed-roles", async () => {
    await expectError(
      await signUpWith({ email: uniqueEmail(), password: PASSWORD, options: { allowedRoles: ["admin"] } }),
      400,
      "role-not-allowed",
    );
    await expectError(
      await signUpWith({
        email: uniqueEmail(),
        password: PASSWORD,
        options: { allowedRoles: ["user"], defaultRole: "me" },
      }),
      400,
      "default-role-must-be-in-allowed-roles",
    );
  });

  it("refuses unknown option keys and bad display names with 400 invalid-request naming the field", async () => {
    const unknown = await expectError(
      await signUpWith({ email: uniqueEmail(), password: PASSWORD, options: { isAdmin: true } }),
      400,
      "invalid-request",
    );
    expect(unknown.message).toContain("options");
    const name = await expectError(
      await signUpWith({ email: uniqueEmail(), password: PASSWORD, options: { displayName: "<script>" } }),
      400,
      "invalid-request",
    );
    expect(name.message).toContain("options.displayName");
  });

  it("creates disabled users without a session when AUTH_DISABLE_NEW_USERS is on", async () => {
    const s = service({ ...NO_VERIFICATION, AUTH_DISABLE_NEW_USERS: "true" });
    const email = uniqueEmail();
    const response = await signUpWith({ email, password: PASSWORD }, s);
    expect(await response.json()).toEqual({ session: null });
    await expectError(
      await s.post("/signin/email-password", { email, password: PASSWORD }),
      401,
      "disabled-user",
    );
  });
});
