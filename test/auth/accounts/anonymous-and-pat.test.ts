import { describe, expect, it } from "vitest";
import {
  decodeJwt,
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";

const svc = service({
  ...NO_VERIFICATION,
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
});

async function anonymous(body?: unknown, s = svc): Promise<WireSession> {
  const response =
    body === undefined
      ? await s.request("POST", "/signin/anonymous")
      : await s.post("/signin/anonymous", body);
  expect(response.status).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

describe("POST /signin/anonymous", () => {
  it("creates an anonymous user with role anonymous, with or without a body", async () => {
    const session = await anonymous();
    expect(session.user).toMatchObject({
      isAnonymous: true,
      defaultRole: "anonymous",
      roles: ["anonymous"],
      displayName: "Anonymous User",
      emailVerified: false,
    });
    expect(session.user.email).toBeUndefined();
    const claims = decodeJwt(session.accessToken).payload["https://hasura.io/jwt/claims"] as Record<
      string,
      unknown
    >;
    expect(claims["x-hasura-user-is-anonymous"]).toBe("true");
    expect((await (await svc.get("/user", session.accessToken)).json()) as object).toMatchObject({
      isAnonymous: true,
    });
    const named = await anonymous({ displayName: "Guest", locale: "en", metadata: { cart: 3 } });
    expect(named.user).toMatchObject({ displayName: "Guest", metadata: { cart: 3 } });
  });

  it("answers 409 disabled-endpoint unless AUTH_ANONYMOUS_USERS_ENABLED", async () => {
    await expectError(await service().post("/signin/anonymous"), 409, "disabled-endpoint");
  });
});

describe("POST /user/deanonymize", () => {
  it("with email-password turns the anonymous user into a regular one who can sign in", async () => {
    const session = await anonymous();
    const email = uniqueEmail();
    const response = await svc.post(
      "/user/deanonymize",
      { signInMethod: "email-password", email, password: PASSWORD },
      session.accessToken,
    );
    expect(await response.json()).toBe("OK");
    const signedIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    const { session: regular } = (await signedIn.json()) as { session: WireSession };
    expect(regular.user).toMatchObject({
      id: session.user.id,
      isAnonymous: false,
      defaultRole: "user",
      roles: ["user", "me"],
    });
  });

  it("with email-password and verification required mails a verification link", async () => {
    const s = service({ AUTH_ANONYMOUS_USERS_ENABLED: "true" });
    const session = await anonymous(undefined, s);
    const email = uniqueEmail();
    await s.post(
      "/user/deanonymize",
      { signInMethod: "email-password", email, password: PASSWORD },
      session.accessToken,
    );
    expect((await mailbox(s, email))[0]!.subject).toBe("Verify your email");
  });

  it("with passwordless mails a magic link that signs in the same user", async () => {
    const session = await anonymous();
    const email = uniqueEmail();
    await svc.post("/user/deanonymize", { signInMethod: "passwordless", email }, session.accessToken);
    const params = await follow(svc, verifyPath((await mailbox(svc, email))[0]!));
    const regular = await sessionFromRefresh(svc, params.get("refreshToken")!);
    expect(regular.user).toMatchObject({
      id: session.user.id,
      email,
      isAnonymous: false,
      emailVerified: true,
    });
  });

  it("refuses regular users, taken emails, a missing password and no token", async () => {
    const regular = await signUp(svc);
    await expectError(
      await svc.post(
        "/user/deanonymize",
        { signInMethod: "email-password", email: uniqueEmail(), password: PASSWORD },
        regular.accessToken,
      ),
      400,
      "user-not-anonymous",
    );
    const session = await anonymous();
    await expectError(
      await svc.post(
        "/user/deanonymize",
        { signInMethod: "email-password", email: regular.user.email, password: PASSWORD },
        session.accessToken,
      ),
      409,
      "email-already-in-use",
    );
    await expectError(
      await svc.post(
        "/user/deanonymize",
        { signInMethod: "email-password", email: uniqueEmail() },
        session.accessToken,
      ),
      400,
      "invalid-request",
    );
    await expectError(
      await svc.post("/user/deanonymize", { signInMethod: "passwordless", email: uniqueEmail() }),
      401,
      "unauthorized",
    );
  });
});

describe("personal access tokens", () => {
  const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();

  it("createPAT returns the token once; signInPAT answers {session} for its user", async () => {
    const session = await signUp(svc);
    const created = await svc.post(
      "/pat",
      { expiresAt: inOneDay(), metadata: { for: "ci" } },
      session.accessToken,
    );
    const { id, personalAccessToken } = (await created.json()) as { id: string; personalAccessToken: string };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(personalAccessToken).toMatch(/^[0-9a-f-]{36}$/);
    const signedIn = await svc.post("/signin/pat", { personalAccessToken });
    const body = (await signedIn.json()) as { session: WireSession };
    expect(body.session.user.id).toBe(session.user.id);
  });

  it("a PAT is never a refresh token and a refresh token is never a PAT", async () => {
    const session = await signUp(svc);
    const { personalAccessToken } = (await (
      await svc.post("/pat", { expiresAt: inOneDay() }, session.accessToken)
    ).json()) as {
      personalAccessToken: string;
    };
    await expectError(
      await svc.post("/token", { refreshToken: personalAccessToken }),
      401,
      "invalid-refresh-token",
    );
    await expectError(
      await svc.post("/signin/pat", { personalAccessToken: session.refreshToken }),
      401,
      "invalid-pat",
    );
  });

  it("refuses unknown PATs, past expiry dates, anonymous users and missing tokens", async () => {
    await expectError(
      await svc.post("/signin/pat", { personalAccessToken: crypto.randomUUID() }),
      401,
      "invalid-pat",
    );
    await expectError(await svc.post("/signin/pat", { personalAccessToken: "nope" }), 400, "invalid-request");
    const session = await signUp(svc);
    await expectError(
      await svc.post("/pat", { expiresAt: "2000-01-01T00:00:00Z" }, session.accessToken),
      400,
      "invalid-request",
    );
    await expectError(
      await svc.post("/pat", { expiresAt: "tomorrow" }, session.accessToken),
      400,
      "invalid-request",
    );
    const anon = await anonymous();
    await expectError(
      await svc.post("/pat", { expiresAt: inOneDay() }, anon.accessToken),
      403,
      "forbidden-anonymous",
    );
    await expectError(await svc.post("/pat", { expiresAt: inOneDay() }), 401, "unauthorized");
  });
});
