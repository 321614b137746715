import { describe, expect, it } from "vitest";
import { expectError, mailbox, PASSWORD, signUp, uniqueEmail, type WireSession } from "../helpers";
import { importUsers, nhostUser } from "../move-in/support";
import {
  basic,
  codeFor,
  exchange,
  newClient,
  postForm,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "../oauth2/support";
import { mintIdToken, signInWith, withProviders } from "../providers/support";
import { uniquePhone } from "../support/phones";
import { userD1 } from "../support/shards";
import { location, openIn, postToAcs, type SamlOrg, samlOrg, startSignIn } from "./saml-support/connection";
import { signedResponse, toBase64 } from "./saml-support/idp";
import { ADMIN } from "./support";

/**
 * Enforced SSO (contract organizations.md §2) against the doors that do not pass the org's IdP and are not its to
 * close: a social provider, a native app's ID token, a personal access token (and SMS and a code mailed before). The
 * threat, for all of them: an employee offboarded at the IdP and by SCIM keeping a way into the account — a personal
 * Google or GitHub account on the work address, an ID token from the phone, a PAT made last year.
 */

const svc = withProviders({
  AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_OAUTH2_PROVIDER_ENABLED: "true",
});

/** Enforcement switched by the admin API (the org's SAML connection to the test IdP is enabled). */
async function enforce(org: SamlOrg, on: boolean) {
  const response = await svc.request("PATCH", `/admin/orgs/${org.orgId}/sso`, {
    json: { enforce: on },
    headers: ADMIN,
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function expectSsoRequired(response: Response) {
  const { message } = await expectError(response, 403, "sso-required");
  expect(message).toContain("/sso/start");
}

const refreshed = (refreshToken: string) => svc.post("/token", { refreshToken });

/** The account's password sign-up still free: no account was made (or linked) for the address. */
async function expectNoAccount(email: string) {
  const made = await svc.post("/signup/email-password", { email, password: PASSWORD });
  expect(made.status, await made.clone().text()).toBe(200);
}

/** A whole SAML sign-in of `email` at the org's IdP: the session. */
async function samlSession(org: SamlOrg, email: string): Promise<WireSession> {
  const { requestId, cookie } = await startSignIn(svc, email);
  const xml = await signedResponse({
    spEntityId: org.spEntityId,
    acsUrl: org.acsUrl,
    nameId: email,
    inResponseTo: requestId,
  });
  const landed = location(await openIn(svc, location(await postToAcs(svc, org, toBase64(xml))), cookie));
  const refreshToken = landed.searchParams.get("refreshToken");
  expect(refreshToken, landed.href).toBeTruthy();
  return (await (await refreshed(refreshToken!)).json()) as WireSession;
}

async function newPat(session: WireSession): Promise<string> {
  const response = await svc.post(
    "/pat",
    { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    session.accessToken,
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { personalAccessToken: string }).personalAccessToken;
}

const signInPat = (personalAccessToken: string) => svc.post("/signin/pat", { personalAccessToken });

describe("enforced SSO closes the doors that bypass the IdP", () => {
  it("refuses a social provider's callback, for an identity linked before and for a new address (no account made)", async () => {
    const org = await samlOrg();
    const email = `gh@${org.domain}`;
    const id = String(Math.floor(Math.random() * 1e12));
    const before = await signInWith(svc, "github", {}, { fake_id: id, fake_email: email });
    const providerSession = before.back.searchParams.get("refreshToken")!;
    expect(providerSession, before.back.href).toBeTruthy();
    await enforce(org, true);

    // Threat: the employee's own GitHub account, linked to the work account, signing in after offboarding.
    const again = await signInWith(svc, "github", {}, { fake_id: id, fake_email: email });
    expect(again.back.searchParams.get("refreshToken")).toBeNull();
    expect(again.back.searchParams.get("error")).toBe("sso-required");
    // Threat: the same identity, its provider now naming a private address: the account's own email decides.
    const moved = await signInWith(svc, "github", {}, { fake_id: id, fake_email: uniqueEmail("private") });
    expect(moved.back.searchParams.get("refreshToken")).toBeNull();
    expect(moved.back.searchParams.get("error")).toBe("sso-required");
    // Threat: the session the provider gave before enforcement refreshing on after it (ended by the sweep).
    await expectError(await refreshed(providerSession), 401, "invalid-refresh-token");
    // Threat: a fresh identity at the provider claiming a new work address: refused before any account is made.
    const newcomer = `new@${org.domain}`;
    const fresh = await signInWith(
      svc,
      "google",
      {},
      { fake_id: `g-${crypto.randomUUID()}`, fake_email: newcomer },
    );
    expect(fresh.back.searchParams.get("error")).toBe("sso-required");
    await enforce(org, false);
    await expectNoAccount(newcomer);
    // Switched off, the provider signs in again.
    const off = await signInWith(svc, "github", {}, { fake_id: id, fake_email: email });
    expect(off.back.searchParams.get("refreshToken")).toBeTruthy();
  });

  it("refuses native ID-token sign-ins and sign-ups of the domain's addresses", async () => {
    const org = await samlOrg();
    const email = `phone@${org.domain}`;
    const sub = `g-${crypto.randomUUID()}`;
    const idToken = () => mintIdToken({ sub, email, email_verified: true });
    const first = await svc.post("/signin/idtoken", { provider: "google", idToken: await idToken() });
    expect(first.status).toBe(200);
    const { session } = (await first.json()) as { session: WireSession };
    await enforce(org, true);

    // Threat: the app on the employee's phone, still signed in to Google, getting a new session after offboarding.
    await expectSsoRequired(
      await svc.post("/signin/idtoken", { provider: "google", idToken: await idToken() }),
    );
    await expectSsoRequired(
      await svc.post("/signup/idtoken", { provider: "google", idToken: await idToken() }),
    );
    await expectError(await refreshed(session.refreshToken), 401, "invalid-refresh-token");
    // Threat: a new Google identity with a work address: no account is made for it.
    const newcomer = `native@${org.domain}`;
    const foreign = await mintIdToken({
      sub: `g-${crypto.randomUUID()}`,
      email: newcomer,
      email_verified: true,
    });
    await expectSsoRequired(await svc.post("/signup/idtoken", { provider: "google", idToken: foreign }));
    await enforce(org, false);
    await expectNoAccount(newcomer);
  });

  // Threat: a PAT made while enforcement is on (by a user signed in through the IdP) outliving the IdP's say-so.
  it("refuses a PAT sign-in of the domain's users, even one made through the IdP", async () => {
    const org = await samlOrg();
    await enforce(org, true);
    const session = await samlSession(org, `script@${org.domain}`);
    const pat = await newPat(session);
    await expectSsoRequired(await signInPat(pat));
    // Other domains' PATs are untouched.
    const other = await newPat(await signUp(svc, uniqueEmail("free")));
    expect((await signInPat(other)).status).toBe(200);
  });

  // Threat: last year's PAT (and the sessions it made) staying alive through enforcement, to sign in again the day
  // it is switched off for a migration, or by any door left open later.
  it("ends the domain's PATs and their sessions when enforcement begins", async () => {
    const org = await samlOrg();
    const owner = await signUp(svc, `ci@${org.domain}`);
    const pat = await newPat(owner);
    const viaPat = ((await (await signInPat(pat)).json()) as { session: WireSession }).session;
    const elsewhere = await newPat(await signUp(svc, uniqueEmail("elsewhere")));
    await enforce(org, true);

    await expectError(await refreshed(viaPat.refreshToken), 401, "invalid-refresh-token");
    await enforce(org, false);
    await expectError(await signInPat(pat), 401, "invalid-pat");
    expect((await signInPat(elsewhere)).status).toBe(200);
  });

  // Threat: an agent's or app's OAuth2 grant, `offline_access` included, given from a password session before
  // enforcement: its refresh token would keep acting as the employee after the IdP and SCIM let them go.
  it("ends the OAuth2 grants the refused sessions gave; a grant from an IdP session keeps refreshing", async () => {
    const org = await samlOrg();
    const client = await newClient(svc);
    const grantFrom = async (session: WireSession) => {
      const { code } = await codeFor(svc, client, session, {
        scope: "openid offline_access",
        code_challenge: await s256(VERIFIER),
        code_challenge_method: "S256",
      });
      const answer = await exchange(svc, client, code, { code_verifier: VERIFIER });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as TokenAnswer).refresh_token!;
    };
    const refreshGrant = (refreshToken: string) =>
      postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: refreshToken },
        basic(client),
      );
    const fromPassword = await grantFrom(await signUp(svc, `agent@${org.domain}`));
    const fromIdp = await grantFrom(await samlSession(org, `vouched@${org.domain}`));
    await enforce(org, true);

    const refused = await refreshGrant(fromPassword);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await refreshGrant(fromIdp)).status).toBe(200);
  });

  // Threat: a session carried from Nhost (its refresh token imported, refreshed here or not yet) outliving the
  // enforcement that ended every other non-IdP session of the employee.
  it("ends the domain's sessions carried from Nhost, refreshed here or not yet", async () => {
    const org = await samlOrg();
    const [carried, waiting] = [
      await nhostUser({ email: `moved-${crypto.randomUUID().slice(0, 8)}@${org.domain}` }),
      await nhostUser({ email: `later-${crypto.randomUUID().slice(0, 8)}@${org.domain}` }),
    ];
    const outside = await nhostUser();
    const { results } = await importUsers(svc, [carried.bundle, waiting.bundle, outside.bundle]);
    expect(results.map((r) => r.outcome)).toEqual(["imported", "imported", "imported"]);
    const here = (await (await refreshed(carried.secrets.refreshToken)).json()) as WireSession;
    await enforce(org, true);
    await expectError(await refreshed(here.refreshToken), 401, "invalid-refresh-token");
    await expectError(await refreshed(waiting.secrets.refreshToken), 401, "invalid-refresh-token");
    expect((await refreshed(outside.secrets.refreshToken)).status).toBe(200);
  });

  it("refuses SMS codes, and a code mailed before enforcement, of the domain's users", async () => {
    const org = await samlOrg();
    const phone = uniquePhone();
    const texted = await smsSession(phone);
    // The account's email is the org's (as if added in the account center; not an identifier the flow looks up).
    await userD1(texted.user.id)
      .prepare("UPDATE users SET email = ? WHERE id = ?")
      .bind(`sms-${crypto.randomUUID().slice(0, 8)}@${org.domain}`, texted.user.id)
      .run();
    const email = `code@${org.domain}`;
    await signUp(svc, email);
    const asked = await svc.post("/signin/otp/email", { email });
    expect(asked.status, await asked.clone().text()).toBe(200);
    const mailed = await codeMailedTo(email);
    await enforce(org, true);

    // Threat: a phone number on the work account as a way in the IdP does not see.
    await expectSsoRequired(await smsVerify(phone, await textCode(phone)));
    await expectError(await refreshed(texted.refreshToken), 401, "invalid-refresh-token");
    // Threat: a code mailed a minute before enforcement, entered a minute after.
    await expectSsoRequired(await svc.post("/signin/otp/email/verify", { email, otp: mailed }));
  });
});

async function textCode(phoneNumber: string): Promise<string> {
  const asked = await svc.post("/signin/passwordless/sms", { phoneNumber });
  expect(asked.status, await asked.clone().text()).toBe(200);
  const texts = (await (await svc.get(`/dev/sms?to=${encodeURIComponent(phoneNumber)}`)).json()) as {
    body: string;
  }[];
  return /\b(\d{6})\b/.exec(texts[0]!.body)![1]!; // newest first
}

const smsVerify = (phoneNumber: string, otp: string) =>
  svc.post("/signin/passwordless/sms/otp", { phoneNumber, otp });

async function smsSession(phoneNumber: string): Promise<WireSession> {
  const answer = await smsVerify(phoneNumber, await textCode(phoneNumber));
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { session: WireSession }).session;
}

async function codeMailedTo(email: string): Promise<string> {
  const [mail] = await mailbox(svc, email);
  return /\b(\d{6})\b/.exec(mail!.text)![1]!;
}
