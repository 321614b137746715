import { env } from "cloudflare:test";
import { AuthApiError } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { type Mail, mailbox, PASSWORD, uniqueEmail } from "../../helpers";
import { eachStatementFailingOnce, failingShards } from "../../support/faults";
import { FACE, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's mailed links and codes (contract supabase.md §2, "Mail"), driven by the real
 * `@supabase/supabase-js`: `signInWithOtp`, `verifyOtp` (by code and by `token_hash`), the mailed link
 * (`GET /verify`), `resetPasswordForEmail`, `resend`. Each mail carries GoTrue's link and a six-digit code, one
 * credential spent once whichever is used. Each test names the auth-js methods it proves.
 */

const WELCOME = "http://localhost:3000/welcome";
const svc = supabaseService({
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: WELCOME,
});

/** The newest mail to `to`: its GoTrue link and its code. */
async function mailTo(to: string): Promise<{ mail: Mail; link: URL; code: string }> {
  const [mail] = await mailbox(svc, to);
  if (!mail) throw new Error(`no mail to ${to}`);
  const link = /(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec(mail.text)?.[1];
  const code = /(\d{6})\s*$/.exec(mail.text.trim())?.[1];
  if (!link || !code) throw new Error(`no link or code in: ${mail.text}`);
  return { mail, link: new URL(link), code };
}

/** Follows a mailed link as a browser does (no apikey): where the 303 goes, and its fragment. */
async function follow(link: URL): Promise<{ target: URL; fragment: URLSearchParams }> {
  const response = await svc.request("GET", link.toString());
  expect(response.status).toBe(303);
  const target = new URL(response.headers.get("location")!);
  return { target, fragment: new URLSearchParams(target.hash.slice(1)) };
}

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("signInWithOtp and verifyOtp by email", () => {
  it("signInWithOtp mails GoTrue's link and a code; verifyOtp({type: 'email'}) signs in; the code and the link are spent", async () => {
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("otp");
    const sent = await supabase.auth.signInWithOtp({
      email,
      options: { emailRedirectTo: WELCOME, data: { plan: "pro" } },
    });
    expect(sent.error).toBeNull();
    const { link, code } = await mailTo(email);
    expect(`${link.origin}${link.pathname}`).toBe(`${FACE}/auth/v1/verify`);
    expect(link.searchParams.get("type")).toBe("magiclink");
    expect(link.searchParams.get("redirect_to")).toBe(WELCOME);

    const verified = await supabase.auth.verifyOtp({ email, token: code, type: "email" });
    expect(verified.error).toBeNull();
    expect(verified.data.session?.token_type).toBe("bearer");
    expect(verified.data.user).toMatchObject({ email, user_metadata: { plan: "pro" } });
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();

    // Threat: replay. The code is single use, and the link of the same mail is the same credential, spent with it.
    const again = await supabaseClient(svc).auth.verifyOtp({ email, token: code, type: "email" });
    expect(again.error).toBeInstanceOf(AuthApiError);
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
    const { fragment } = await follow(link);
    expect(fragment.get("error_code")).toBe("otp_expired");
    expect(fragment.get("access_token")).toBeNull();
  });

  it("the mailed link (GET /verify, no apikey) lands on redirect_to with the session in the fragment; once", async () => {
    const email = uniqueEmail("link");
    await supabaseClient(svc).auth.signInWithOtp({ email, options: { emailRedirectTo: WELCOME } });
    const { link, code } = await mailTo(email);
    const { target, fragment } = await follow(link);
    expect(`${target.origin}${target.pathname}`).toBe(WELCOME);
    expect(fragment.get("type")).toBe("magiclink");
    expect(fragment.get("token_type")).toBe("bearer");
    const supabase = supabaseClient(svc);
    const set = await supabase.auth.setSession({
      access_token: fragment.get("access_token")!,
      refresh_token: fragment.get("refresh_token")!,
    });
    expect(set.error).toBeNull();
    expect((await supabase.auth.getUser()).data.user?.email).toBe(email);

    // Threat: replay of the link, and of the code that came with it.
    const replay = await follow(link);
    expect(replay.fragment.get("error")).toBe("access_denied");
    expect(replay.fragment.get("error_code")).toBe("otp_expired");
    const late = await supabaseClient(svc).auth.verifyOtp({ email, token: code, type: "email" });
    expect(late.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("verifyOtp({token_hash, type}) signs in with the link's token; a token_hash of another type is refused and not spent", async () => {
    const email = uniqueEmail("hash");
    await supabaseClient(svc).auth.signInWithOtp({ email });
    const tokenHash = (await mailTo(email)).link.searchParams.get("token")!;
    // Threat: a token of one kind used as another (a magic link's token as a recovery's).
    const other = await supabaseClient(svc).auth.verifyOtp({ token_hash: tokenHash, type: "recovery" });
    expect(other.error).toMatchObject({ status: 403, code: "otp_expired" });
    const right = await supabaseClient(svc).auth.verifyOtp({ token_hash: tokenHash, type: "magiclink" });
    expect(right.error).toBeNull();
    expect(right.data.user?.email).toBe(email);
    const replay = await supabaseClient(svc).auth.verifyOtp({ token_hash: tokenHash, type: "magiclink" });
    expect(replay.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("a code answers only for the address it was mailed to, and dies after five wrong tries", async () => {
    const [a, b] = [uniqueEmail("cross-a"), uniqueEmail("cross-b")];
    const supabase = supabaseClient(svc);
    await supabase.auth.signInWithOtp({ email: a });
    await supabase.auth.signInWithOtp({ email: b });
    const codeOfA = (await mailTo(a)).code;
    // Threat: a cross-user token. A's code presented with B's address is a wrong code for B.
    const crossed = await supabase.auth.verifyOtp({ email: b, token: codeOfA, type: "email" });
    expect(crossed.error).toMatchObject({ status: 403, code: "otp_expired" });
    // Threat: guessing. Five wrong tries kill the code; the right one is refused after them.
    for (let i = 0; i < 5; i++) {
      const guess = await supabase.auth.verifyOtp({ email: a, token: wrong(codeOfA), type: "email" });
      expect(guess.error).toMatchObject({ status: 403, code: "otp_expired" });
    }
    const late = await supabase.auth.verifyOtp({ email: a, token: codeOfA, type: "email" });
    expect(late.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  // Threat: takeover from a mailbox the account left. A magic-link code mailed to X, the account's address then;
  // the user moves to Y and later asks the Nhost API for a magic link (a ticket of the same type, mailed to Y with
  // no code). X's code named "the user's magic link", so it redeemed Y's ticket: a session for whoever reads X.
  it("after a newer link of its type to another address, the old address's code signs no one in", async () => {
    const [x, y] = [uniqueEmail("left-x"), uniqueEmail("left-y")];
    const supabase = supabaseClient(svc);
    await supabase.auth.signUp({ email: x, password: PASSWORD });
    await supabase.auth.signInWithPassword({ email: x, password: PASSWORD });
    await supabaseClient(svc).auth.signInWithOtp({ email: x });
    const codeOfX = (await mailTo(x)).code;
    expect((await supabase.auth.updateUser({ email: y })).error).toBeNull();
    const changed = await supabaseClient(svc).auth.verifyOtp({
      email: y,
      token: (await mailTo(y)).code,
      type: "email_change",
    });
    expect(changed.data.user?.email).toBe(y);
    const nhostLink = await svc.post("/signin/passwordless/email", { email: y });
    expect(nhostLink.status).toBe(200);

    const stolen = await supabaseClient(svc).auth.verifyOtp({ email: x, token: codeOfX, type: "magiclink" });
    expect(stolen.error).toMatchObject({ status: 403, code: "otp_expired" });
    expect(stolen.data.session).toBeNull();
  });

  // Threat: pre-hijacking through the sign-in form. A stranger signs the owner's address up with a password; the
  // owner asks for a sign-in code; the stranger has the sign-up verification mailed again (anyone may). One code
  // object per address: the verification's code replaced the owner's, whose code failed, so the owner typed the
  // newest mail's code into the same form, confirming the stranger's sign-up with its password. Each kind of mail now
  // keeps its own code: the owner's works, and proves the address the way that wipes the stranger's password.
  it("a sign-up verification mailed meanwhile leaves the owner's sign-in code working, and the stranger's password goes", async () => {
    const email = uniqueEmail("displaced");
    const stranger = supabaseClient(svc);
    expect((await stranger.auth.signUp({ email, password: "stranger's password" })).error).toBeNull();
    const owner = supabaseClient(svc);
    expect((await owner.auth.signInWithOtp({ email })).error).toBeNull();
    const ownersCode = (await mailTo(email)).code;
    expect((await stranger.auth.resend({ type: "signup", email })).error).toBeNull();
    expect((await mailTo(email)).code).not.toBe(ownersCode);

    const signedIn = await owner.auth.verifyOtp({ email, token: ownersCode, type: "email" });
    expect(signedIn.error).toBeNull();
    const again = await supabaseClient(svc).auth.signInWithPassword({
      email,
      password: "stranger's password",
    });
    expect(again.error).toMatchObject({ status: 400, code: "invalid_credentials" });
  });

  it("shouldCreateUser: false answers an unknown address as a known one and mails nothing (no enumeration)", async () => {
    const supabase = supabaseClient(svc);
    const unknown = uniqueEmail("nobody");
    const sent = await supabase.auth.signInWithOtp({ email: unknown, options: { shouldCreateUser: false } });
    expect(sent.error).toBeNull();
    expect(await mailbox(svc, unknown)).toEqual([]);
    const known = uniqueEmail("somebody");
    await supabase.auth.signUp({ email: known, password: PASSWORD });
    expect(
      (await supabase.auth.signInWithOtp({ email: known, options: { shouldCreateUser: false } })).error,
    ).toBeNull();
    expect(await mailbox(svc, known)).toHaveLength(1);
  });

  it("emailRedirectTo off the allow-list leads to the default target instead, as GoTrue falls back to SITE_URL", async () => {
    const email = uniqueEmail("redirect");
    await supabaseClient(svc).auth.signInWithOtp({
      email,
      options: { emailRedirectTo: "https://evil.example/x" },
    });
    const { link } = await mailTo(email);
    expect(link.searchParams.get("redirect_to")).toBe("http://localhost:3000");
    // Threat: an open redirect. The link's redirect_to edited to another site lands on the default target too.
    link.searchParams.set("redirect_to", "https://evil.example/x");
    const { target, fragment } = await follow(link);
    expect(target.origin).toBe("http://localhost:3000");
    expect(fragment.get("access_token")).toBeTruthy();
  });

  it("the mail is in the user's language, the code line too", async () => {
    const email = uniqueEmail("fr");
    await svc.post("/signup/email-password", { email, password: PASSWORD, options: { locale: "fr" } });
    await supabaseClient(svc).auth.signInWithOtp({ email });
    const { mail, code } = await mailTo(email);
    expect(mail.subject).toBe("Votre lien de connexion");
    expect(mail.text).toContain(`Ou saisissez ce code : ${code}`);
    expect(mail.html).toContain(`<strong>${code}</strong>`);
  });

  it("under PKCE the link lands with ?code= and no tokens: the core's link exchange code, for the verifier's holder", async () => {
    const email = uniqueEmail("pkce");
    const supabase = supabaseClient(svc);
    // The client's own flow type: its code_challenge goes with the request, its verifier stays in its storage.
    const auth = supabase.auth as unknown as {
      flowType: string;
      storageKey: string;
      storage: { getItem(key: string): Promise<string | null> | string | null };
    };
    auth.flowType = "pkce";
    expect(
      (await supabase.auth.signInWithOtp({ email, options: { emailRedirectTo: WELCOME } })).error,
    ).toBeNull();
    const { target } = await follow((await mailTo(email)).link);
    const code = target.searchParams.get("code")!;
    expect(code).toBeTruthy();
    expect(target.hash).toBe("");
    // `POST /token?grant_type=pkce` (exchangeCodeForSession) redeems these codes through the core's
    // redeemExchangeCode, as the Nhost API's `/token/exchange` does: the code is spent here by the latter.
    const stored = JSON.parse(
      String(await auth.storage.getItem(`${auth.storageKey}-code-verifier`)),
    ) as string;
    const verifier = stored.split("/")[0];
    const exchanged = await svc.post("/token/exchange", { code, codeVerifier: verifier });
    expect(exchanged.status).toBe(200);
  });
});

describe("verifyOtp with D1 failing once at each statement", () => {
  const verify = (face: ReturnType<typeof supabaseService>, body: Record<string, string>) =>
    face.request("POST", `${FACE}/auth/v1/verify`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const newMail = async () => {
    const email = uniqueEmail("verify-fault");
    expect((await supabaseClient(svc).auth.signInWithOtp({ email })).error).toBeNull();
    const { link, code } = await mailTo(email);
    return { email, code, tokenHash: link.searchParams.get("token")! };
  };
  const settings = {
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: WELCOME,
  };

  // Threat: a fault after the mail's ticket was spent (the session's batch, or the user's identities and factors
  // read after it) answered 503 with the link dead: the retry was refused (403 otp_expired), and the person had to
  // ask for another mail. By token hash the same link works again; by code (spent in its own store) the mail's link.
  for (const by of ["token_hash", "code"] as const) {
    it(`by ${by}: a session, or a 503 after which the mail's link still signs in`, async () => {
      const bodyOf = (mail: Awaited<ReturnType<typeof newMail>>): Record<string, string> =>
        by === "token_hash"
          ? { token_hash: mail.tokenHash, type: "magiclink" }
          : { email: mail.email, token: mail.code, type: "email" };
      let faults = 0;
      await eachStatementFailingOnce(
        env,
        async (bindings) =>
          expect(
            (await verify(supabaseService({ ...settings, ...bindings }), bodyOf(await newMail()))).status,
          ).toBe(200),
        async (bindings, context) => {
          const failing = supabaseService({ ...settings, ...bindings });
          const mail = await newMail();
          const answer = await verify(failing, bodyOf(mail));
          if (answer.status === 200) return;
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          faults++;
          const retry = await verify(failing, { token_hash: mail.tokenHash, type: "magiclink" });
          expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
          expect(((await retry.json()) as { user: { email: string } }).user.email, context).toBe(mail.email);
        },
      );
      expect(faults).toBeGreaterThan(1);
    }, 60_000);
  }
});

describe("signUp under PKCE", () => {
  const settings = {
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true",
    AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: WELCOME,
  };
  const confirming = supabaseService(settings);

  // Threat: a confirmation link that signs in whoever opens it. Under PKCE (@supabase/ssr's flow) the link lands
  // with a code only, which only the holder of the sign-up's verifier turns into a session, once.
  it("signUp's confirmation link lands with ?code=; exchangeCodeForSession turns it into a session, once", async () => {
    const email = uniqueEmail("pkce-signup");
    const supabase = supabaseClient(confirming);
    (supabase.auth as unknown as { flowType: string }).flowType = "pkce";
    const signedUp = await supabase.auth.signUp({
      email,
      password: PASSWORD,
      options: { emailRedirectTo: WELCOME },
    });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.session).toBeNull();
    const { target } = await follow((await mailTo(email)).link);
    expect(`${target.origin}${target.pathname}`).toBe(WELCOME);
    const code = target.searchParams.get("code")!;
    expect(code).toBeTruthy();
    expect(target.hash).toBe("");
    const exchanged = await supabase.auth.exchangeCodeForSession(code);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user?.email_confirmed_at).toEqual(expect.any(String));
    const again = await supabase.auth.exchangeCodeForSession(code);
    expect(again.error).not.toBeNull();
  });

  // Threat: a database blip after the code was taken answered 503 with the code gone: the retry the 503 asks for was
  // refused (404 flow_state_not_found) and the confirmation link the user clicked was lost.
  it("a fault at the exchange's session: 503, and the same code and verifier then sign in, once", async () => {
    const email = uniqueEmail("pkce-fault");
    const supabase = supabaseClient(confirming);
    const auth = supabase.auth as unknown as {
      flowType: string;
      storageKey: string;
      storage: { getItem(key: string): string | null | Promise<string | null> };
    };
    auth.flowType = "pkce";
    await supabase.auth.signUp({ email, password: PASSWORD, options: { emailRedirectTo: WELCOME } });
    const code = (await follow((await mailTo(email)).link)).target.searchParams.get("code")!;
    // Stored as JSON (supabase-js's storage helpers), "verifier/flow type".
    const stored = await auth.storage.getItem(`${auth.storageKey}-code-verifier`);
    const verifier = (JSON.parse(String(stored)) as string).split("/")[0];
    const grant = (face: ReturnType<typeof supabaseService>) =>
      face.request("POST", `${FACE}/auth/v1/token?grant_type=pkce`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
        body: JSON.stringify({ auth_code: code, code_verifier: verifier }),
      });
    const { bindings, fault } = failingShards(env, { match: /insert into "sessions"/, times: 1 });
    const failing = supabaseService({ ...settings, ...bindings });
    const refused = await grant(failing);
    expect(refused.status, await refused.clone().text()).toBe(503);
    expect(fault.failures).toBe(1);
    const retried = await grant(failing);
    expect(retried.status, await retried.clone().text()).toBe(200);
    expect(((await retried.json()) as { user: { email: string } }).user.email).toBe(email);
    expect((await grant(confirming)).status).toBe(404);
  });
});

describe("resetPasswordForEmail and resend", () => {
  it("resetPasswordForEmail mails a recovery link and code; verifyOtp({type: 'recovery'}) fires PASSWORD_RECOVERY; updateUser sets the password", async () => {
    const email = uniqueEmail("recover");
    const supabase = supabaseClient(svc);
    await supabase.auth.signUp({ email, password: PASSWORD });
    expect((await supabase.auth.resetPasswordForEmail(email, { redirectTo: WELCOME })).error).toBeNull();
    const { link, code } = await mailTo(email);
    expect(link.searchParams.get("type")).toBe("recovery");

    const app = supabaseClient(svc);
    const events: string[] = [];
    app.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const verified = await app.auth.verifyOtp({ email, token: code, type: "recovery" });
    expect(verified.error).toBeNull();
    expect(events).toContain("PASSWORD_RECOVERY");
    expect((await app.auth.updateUser({ password: "a new horse battery" })).error).toBeNull();
    const signedIn = await supabaseClient(svc).auth.signInWithPassword({
      email,
      password: "a new horse battery",
    });
    expect(signedIn.error).toBeNull();
  });

  it("the recovery link lands with type=recovery in the fragment (auth-js's PASSWORD_RECOVERY)", async () => {
    const email = uniqueEmail("recover-link");
    await supabaseClient(svc).auth.signUp({ email, password: PASSWORD });
    await supabaseClient(svc).auth.resetPasswordForEmail(email, { redirectTo: WELCOME });
    const { fragment } = await follow((await mailTo(email)).link);
    expect(fragment.get("type")).toBe("recovery");
    expect(fragment.get("refresh_token")).toBeTruthy();
  });

  it("resetPasswordForEmail for an unknown address answers the same and mails nothing (no enumeration)", async () => {
    const unknown = uniqueEmail("no-reset");
    expect((await supabaseClient(svc).auth.resetPasswordForEmail(unknown)).error).toBeNull();
    expect(await mailbox(svc, unknown)).toEqual([]);
  });

  it("resend({type: 'signup'}) mails the confirmation; verifyOtp({type: 'signup'}) confirms; unknown addresses answer the same", async () => {
    const email = uniqueEmail("resend");
    const supabase = supabaseClient(svc);
    await supabase.auth.signUp({ email, password: PASSWORD });
    expect((await supabase.auth.resend({ type: "signup", email })).error).toBeNull();
    const { link, code } = await mailTo(email);
    expect(link.searchParams.get("type")).toBe("signup");
    const verified = await supabase.auth.verifyOtp({ email, token: code, type: "signup" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();
    // The sign-up confirmation keeps the password set at sign-up (it is the account's own proof).
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD })).error,
    ).toBeNull();
    // Confirmed now, and an unknown address: the same answer, no mail.
    expect((await supabase.auth.resend({ type: "signup", email })).error).toBeNull();
    const unknown = uniqueEmail("resend-nobody");
    expect((await supabase.auth.resend({ type: "signup", email: unknown })).error).toBeNull();
    expect(await mailbox(svc, unknown)).toEqual([]);
  });
});
