import { AuthSessionMissingError, AuthWeakPasswordError } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp, uniqueEmail } from "../../helpers";
import { FAKE_PROVIDERS, mintIdToken } from "../../providers/support";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's sessions (contract supabase.md §2), driven by the real `@supabase/supabase-js`: each test names
 * the auth-js methods it proves. One account and one session list behind both faces.
 */

const svc = supabaseService();

describe("auth-js against the face: sign-up, password, refresh, user, sign-out", () => {
  it("signUp, signInWithPassword, getUser, refreshSession, signOut", async () => {
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("sb");
    const signedUp = await supabase.auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { plan: "pro" } },
    });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.session?.token_type).toBe("bearer");
    expect(signedUp.data.user).toMatchObject({ email, aud: "authenticated", user_metadata: { plan: "pro" } });

    const signedIn = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    const session = signedIn.data.session!;
    expect(session.expires_at).toBeGreaterThan(Date.now() / 1000);

    const { data: got, error: getError } = await supabase.auth.getUser();
    expect(getError).toBeNull();
    expect(got.user?.id).toBe(signedUp.data.user?.id);

    const refreshed = await supabase.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session?.refresh_token).not.toBe(session.refresh_token);

    expect((await supabase.auth.signOut()).error).toBeNull();
    // The signed-out session's token still verifies, but its session is gone: GoTrue's 403 session_not_found, which
    // auth-js reads as a missing session (and signs the app out).
    const stale = refreshed.data.session!.access_token;
    const after = await supabaseClient(svc).auth.getUser(stale);
    expect(after.error).toBeInstanceOf(AuthSessionMissingError);
    const raw = await svc.request("GET", `${FACE}/auth/v1/user`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${stale}` },
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get("x-sb-error-code")).toBe("session_not_found");
  });

  it("access tokens carry GoTrue's claims and the Hasura namespace; getClaims verifies them by the JWKS", async () => {
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("claims");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { data } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({
      iss: `${FACE}/auth/v1`,
      aud: "authenticated",
      role: "authenticated",
      email,
      aal: "aal1",
      is_anonymous: false,
      app_metadata: { provider: "email", providers: ["email"] },
    });
    expect(claims.session_id).toEqual(expect.any(String));
    expect(claims.amr).toEqual([{ method: "password", timestamp: expect.any(Number) }]);
    expect(claims["https://hasura.io/jwt/claims"]).toMatchObject({ "x-hasura-user-id": data.user!.id });

    const verified = await supabase.auth.getClaims();
    expect(verified.error).toBeNull();
    expect(verified.data?.claims.sub).toBe(data.user!.id);
  });

  // Threat: a refresh token stolen and used after its owner's client rotated it: the family ends (single use).
  it("a refresh token spent twice, outside the grace window, ends the session", async () => {
    const strict = supabaseService({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const supabase = supabaseClient(strict);
    const email = uniqueEmail("replay");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { data } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const first = data.session!.refresh_token;
    expect((await supabase.auth.refreshSession({ refresh_token: first })).error).toBeNull();
    const replay = await supabaseClient(strict).auth.refreshSession({ refresh_token: first });
    expect(replay.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
  });

  it("one account behind both faces: a Nhost sign-up signs in through auth-js, its session in the same list", async () => {
    const email = uniqueEmail("both");
    const nhost = await signUp(svc, email);
    const { data, error } = await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(nhost.user.id);
    const listed = await svc.get("/user/sessions", nhost.accessToken);
    const sessions = ((await listed.json()) as { items: { id: string }[] }).items;
    expect(sessions.map((s) => s.id)).toContain(decodeJwt(data.session!.access_token).session_id);
  });

  it("onAuthStateChange sees SIGNED_IN, TOKEN_REFRESHED, USER_UPDATED and SIGNED_OUT, each with its session", async () => {
    // An app's UI follows these events (contract supabase.md §2): a face answer auth-js does not take as a session
    // (a missing field, a wrong shape) shows up here as a missing event or one without a session.
    const supabase = supabaseClient(svc);
    const seen: { event: string; user?: string; token?: string }[] = [];
    const { data: listener } = supabase.auth.onAuthStateChange((event, session) => {
      if (event !== "INITIAL_SESSION")
        seen.push({ event, user: session?.user.id, token: session?.access_token.slice(-12) });
    });
    const email = uniqueEmail("events");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const signedIn = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const refreshed = await supabase.auth.refreshSession();
    await supabase.auth.updateUser({ data: { theme: "dark" } });
    await supabase.auth.signOut();
    listener.subscription.unsubscribe();

    const id = signedIn.data.user!.id;
    expect(seen.map((s) => s.event)).toEqual([
      "SIGNED_IN",
      "SIGNED_IN",
      "TOKEN_REFRESHED",
      "USER_UPDATED",
      "SIGNED_OUT",
    ]);
    expect(seen.slice(0, 4).every((s) => s.user === id)).toBe(true);
    expect(seen[1]!.token).toBe(signedIn.data.session!.access_token.slice(-12));
    expect(seen[2]!.token).toBe(refreshed.data.session!.access_token.slice(-12));
    expect(seen[4]!.user).toBeUndefined();
  });
});

describe("auth-js: anonymous users and updateUser", () => {
  it("signInAnonymously: a session for a new anonymous user (off unless anonymous users are enabled)", async () => {
    const open = supabaseService({ AUTH_ANONYMOUS_USERS_ENABLED: "true" });
    const { data, error } = await supabaseClient(open).auth.signInAnonymously({
      options: { data: { tag: "guest" } },
    });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ is_anonymous: true, user_metadata: { tag: "guest" } });
    expect(decodeJwt(data.session!.access_token)).toMatchObject({
      is_anonymous: true,
      role: "authenticated",
    });
    const off = await supabaseClient(svc).auth.signInAnonymously();
    expect(off.error).toMatchObject({ status: 422, code: "anonymous_provider_disabled" });
  });

  it("updateUser: data merges into user_metadata (null removes a key); a new password signs in, the old one not", async () => {
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("update");
    await supabase.auth.signUp({ email, password: PASSWORD, options: { data: { a: 1, b: 2 } } });
    const merged = await supabase.auth.updateUser({ data: { b: null, c: { deep: true } } });
    expect(merged.error).toBeNull();
    expect(merged.data.user?.user_metadata).toEqual({ a: 1, c: { deep: true } });
    expect((await supabase.auth.getUser()).data.user?.user_metadata).toEqual({ a: 1, c: { deep: true } });

    const newPassword = "a brand new passphrase";
    expect((await supabase.auth.updateUser({ password: newPassword })).error).toBeNull();
    const old = await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD });
    expect(old.error).toMatchObject({ code: "invalid_credentials" });
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: newPassword })).error,
    ).toBeNull();
    // The session that changed it stays signed in.
    expect((await supabase.auth.getUser()).error).toBeNull();
  });

  // Threat: metadata nested thousands deep overflowing the stack of JSON.stringify or a Durable Object's clone: a 500.
  it("refuses metadata past the bounds with 400, never a 500", async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) deep = { d: deep };
    const { error } = await supabaseClient(svc).auth.signUp({
      email: uniqueEmail("deep"),
      password: PASSWORD,
      options: { data: deep },
    });
    expect(error).toMatchObject({ status: 400, code: "validation_failed" });
  });
});

describe("the same protections as the Nhost face", () => {
  // Threat: a second API as a way around the deployment's bot check: a sign-up or sign-in through the face without a
  // solved challenge. supabase-js sends the token as `captchaToken` (GoTrue's `gotrue_meta_security.captcha_token`).
  it("Turnstile guards signUp and signInWithPassword through captchaToken", async () => {
    const guarded = supabaseService({
      AUTH_TURNSTILE_SECRET: "turnstile-secret",
      AUTH_TURNSTILE_VERIFY_URL: "https://turnstile.fake/siteverify",
      AUTH_TURNSTILE_ENDPOINTS: "signup,signin",
    });
    const supabase = supabaseClient(guarded);
    const email = uniqueEmail("captcha");
    const bare = await supabase.auth.signUp({ email, password: PASSWORD });
    expect(bare.error).toMatchObject({ status: 400, code: "captcha_failed" });
    const solved = (action: string) => `pass:localhost:${action}:${crypto.randomUUID()}`;
    const made = await supabase.auth.signUp({
      email,
      password: PASSWORD,
      options: { captchaToken: solved("signup") },
    });
    expect(made.error).toBeNull();
    const noToken = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    expect(noToken.error).toMatchObject({ status: 400, code: "captcha_failed" });
    const signedIn = await supabase.auth.signInWithPassword({
      email,
      password: PASSWORD,
      options: { captchaToken: solved("signin") },
    });
    expect(signedIn.error).toBeNull();
  });

  it("signOut's scopes: others ends the other sessions, local this one", async () => {
    const email = uniqueEmail("scopes");
    const [one, two] = [supabaseClient(svc), supabaseClient(svc)];
    await one.auth.signUp({ email, password: PASSWORD });
    const first = (await one.auth.signInWithPassword({ email, password: PASSWORD })).data.session!;
    const second = (await two.auth.signInWithPassword({ email, password: PASSWORD })).data.session!;
    expect((await two.auth.signOut({ scope: "others" })).error).toBeNull();
    expect((await supabaseClient(svc).auth.getUser(first.access_token)).error).toBeInstanceOf(
      AuthSessionMissingError,
    );
    expect((await supabaseClient(svc).auth.getUser(second.access_token)).error).toBeNull();
    expect((await two.auth.signOut({ scope: "local" })).error).toBeNull();
    expect((await supabaseClient(svc).auth.getUser(second.access_token)).error).toBeInstanceOf(
      AuthSessionMissingError,
    );
  });
});

describe("GoTrue's errors, as auth-js reads them", () => {
  it("wrong password: 400 invalid_credentials; a taken address: 422 user_already_exists", async () => {
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("errors");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const wrong = await supabase.auth.signInWithPassword({ email, password: "not the password at all" });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_credentials" });
    const again = await supabase.auth.signUp({ email, password: PASSWORD });
    expect(again.error).toMatchObject({ status: 422, code: "user_already_exists" });
  });

  it("a short password: 422 weak_password with its reasons", async () => {
    const { error } = await supabaseClient(svc).auth.signUp({
      email: uniqueEmail("weak"),
      password: "short",
    });
    expect(error).toBeInstanceOf(AuthWeakPasswordError);
    expect((error as AuthWeakPasswordError).reasons).toEqual(["length"]);
  });

  it("answers the initial shape without the API version header, and echoes the version with it", async () => {
    const body = JSON.stringify({ email: uniqueEmail("shape"), password: "wrong password here" });
    const headers = { apikey: PUBLISHABLE_KEY, "content-type": "application/json" };
    const old = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=password`, { headers, body });
    expect(old.status).toBe(400);
    expect(old.headers.get("x-sb-error-code")).toBe("invalid_credentials");
    expect(await old.json()).toEqual({
      code: 400,
      error_code: "invalid_credentials",
      msg: "Invalid login credentials",
    });
    const versioned = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
      headers: { ...headers, "X-Supabase-Api-Version": "2024-01-01" },
      body,
    });
    expect(versioned.headers.get("X-Supabase-Api-Version")).toBe("2024-01-01");
    expect(await versioned.json()).toEqual({
      code: "invalid_credentials",
      message: "Invalid login credentials",
    });
  });

  it("bad input gets GoTrue's 400, never a 500: malformed JSON, a missing password, an unknown grant", async () => {
    const headers = { apikey: PUBLISHABLE_KEY, "content-type": "application/json" };
    const url = `${FACE}/auth/v1/token?grant_type=password`;
    const malformed = await svc.request("POST", url, { headers, body: "{" });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error_code: string }).error_code).toBe("bad_json");
    const missing = await svc.request("POST", url, {
      headers,
      body: JSON.stringify({ email: "a@example.com" }),
    });
    expect(((await missing.json()) as { error_code: string }).error_code).toBe("validation_failed");
    // Text no UTF-8 writer takes (a lone surrogate): refused in any field, named, as the Nhost API refuses it.
    const lone = await svc.request("POST", url, {
      headers,
      body: '{"email":"a@example.com","password":"pass\\ud800word"}',
    });
    expect(lone.status).toBe(400);
    expect(await lone.json()).toMatchObject({
      error_code: "validation_failed",
      msg: expect.stringMatching(/^password: text that is not well-formed Unicode/),
    });
    // Threat: a grant named after Object's own functions (`constructor`, `toString`…) was looked up in the grants'
    // limits and run as a middleware: a 500, outside GoTrue's shape for two of them.
    for (const grant of ["magic", "constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      const unknown = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=${grant}`, {
        headers,
        body: "{}",
      });
      expect(unknown.status, grant).toBe(400);
      expect(await unknown.json()).toMatchObject({
        error_code: "validation_failed",
        msg: "unsupported_grant_type",
      });
    }
    const nowhere = await svc.request("GET", `${FACE}/auth/v1/no-such-route`, { headers });
    expect(nowhere.status).toBe(404);
    expect(((await nowhere.json()) as { error_code: string }).error_code).toBe("not_found");
  });
});

describe("who may call the face (contract supabase.md §1)", () => {
  it("refuses a missing or wrong apikey with 401; health and the key set are open", async () => {
    const missing = await svc.request("GET", `${FACE}/auth/v1/settings`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { msg: string }).msg).toBe("No API key found in request");
    const wrong = await svc.request("GET", `${FACE}/auth/v1/settings`, {
      headers: { apikey: "sb_publishable_not-a-key-of-this-service" },
    });
    expect(wrong.status).toBe(401);
    expect((await svc.request("GET", `${FACE}/auth/v1/health`)).status).toBe(200);
    const jwks = await svc.request("GET", `${FACE}/auth/v1/.well-known/jwks.json`);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    const settings = await svc.request("GET", `${FACE}/auth/v1/settings`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(await settings.json()).toMatchObject({ external: { email: true }, disable_signup: false });
  });

  // Threat: a secret key shipped in a web app's bundle: every visitor would hold the service role.
  it("refuses a secret key sent from a browser", async () => {
    const fromPage = await svc.request("GET", `${FACE}/auth/v1/settings`, {
      headers: { apikey: SECRET_KEY, origin: "http://localhost:3000" },
    });
    expect(fromPage.status).toBe(401);
    expect(((await fromPage.json()) as { msg: string }).msg).toBe(
      "Forbidden use of secret API key in browser",
    );
    const fromServer = await svc.request("GET", `${FACE}/auth/v1/settings`, {
      headers: { apikey: SECRET_KEY },
    });
    expect(fromServer.status).toBe(200);
  });

  it("is not mounted unless AUTH_SUPABASE_API_ENABLED is on", async () => {
    const off = supabaseService({ AUTH_SUPABASE_API_ENABLED: "false" });
    const answer = await off.request("GET", `${FACE}/auth/v1/health`);
    expect(answer.status).toBe(404);
  });
});

describe("auth-js: signInWithIdToken", () => {
  // Threats as on the Nhost face (test/providers/id-tokens.test.ts): a token for another app, or replayed from another
  // sign-in (nonce), signs nobody in.
  it("a Google ID token signs a new user up and the same user in again; a foreign audience or nonce is refused", async () => {
    const withGoogle = supabaseService({ ...FAKE_PROVIDERS, AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client" });
    const supabase = supabaseClient(withGoogle);
    const email = uniqueEmail("sb-idtoken");
    const sub = `g-${crypto.randomUUID()}`;
    const first = await supabase.auth.signInWithIdToken({
      provider: "google",
      token: await mintIdToken({ sub, email, email_verified: true, nonce: "n-1" }),
      nonce: "n-1",
    });
    expect(first.error).toBeNull();
    expect(first.data.user?.email).toBe(email);
    expect(decodeJwt(first.data.session!.access_token).amr).toEqual([
      { method: "oauth", timestamp: expect.any(Number) },
    ]);
    const again = await supabase.auth.signInWithIdToken({
      provider: "google",
      token: await mintIdToken({ sub, email }),
    });
    expect(again.data.user?.id).toBe(first.data.user?.id);
    const foreign = await supabase.auth.signInWithIdToken({
      provider: "google",
      token: await mintIdToken({ sub, aud: "someone-else" }),
    });
    expect(foreign.error).toMatchObject({ status: 400, code: "bad_jwt" });
    const replayed = await supabase.auth.signInWithIdToken({
      provider: "google",
      token: await mintIdToken({ sub, nonce: "n-2" }),
      nonce: "n-3",
    });
    expect(replayed.error).toMatchObject({ status: 400, code: "bad_jwt" });
  });
});
