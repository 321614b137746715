// Risk-aware sign-in (issue 47, docs/risk.md) through the HTTP surface, with `request.cf` injected as Cloudflare sets
// it: each level and what the policy does with it, impossible travel, velocity, disposable domains, what the audit
// records, what the new-device mail says, and the rule nothing overrides (the owner's own browser is never refused).
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addressKey } from "../../src/rate-limits/client-address";
import { greatCircleKm, travelFrom } from "../../src/risk/travel";
import { FACE, PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import { decodeJwt, expectError, mailbox, NO_VERIFICATION, service, uniqueAddress } from "../helpers";
import {
  BERLIN,
  elsewhere,
  HAMBURG,
  lastRisk,
  mailedCode,
  ownerAt,
  riskRows,
  SYDNEY,
  signInFrom,
  verified,
  withTotp,
} from "./support";

const BASE = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", AUTH_MFA_TOTP_ISSUER: "Acme" };
const byDefault = service(BASE);
const strict = service({ ...BASE, AUTH_RISK_POLICY: "low=allow,medium=challenge,high=refuse" });

const sessionOf = async (response: Response) => {
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as {
    session: { accessToken: string } | null;
    mfa: { ticket: string } | null;
  };
};

describe("levels and the default policy (low=allow, medium=allow, high=challenge)", () => {
  // Threat: a stolen password used from a new device in another country signs straight in (issue 47's own case).
  it("low: the owner's own browser at home, let through unrecorded; medium: a new device at home, recorded", async () => {
    const owner = await ownerAt(byDefault, BERLIN);
    // Low: the known browser, the same place: a session straight away, even where medium would be asked (strict),
    // and no audit row of its own (the `signin.success` says it all: no D1 write per calm sign-in).
    const before = (await riskRows(owner.userId)).length;
    const home = await sessionOf(await signInFrom(strict, owner.email, { ...owner.home, cf: BERLIN }));
    expect(home.session?.accessToken).toBeTruthy();
    expect(await riskRows(owner.userId)).toHaveLength(before);
    // Medium: another browser in the same country (Hamburg, 255 km: no travel).
    await sessionOf(await signInFrom(byDefault, owner.email, elsewhere(HAMBURG)));
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "medium",
      reasons: ["new-device"],
      decision: "allow",
      signals: { device: "new", newCountry: false, travel: { impossible: false } },
    });
  });

  // Threat: the same with the new country: the default policy must ask for the user's own second factor.
  it("high on a user with TOTP: the TOTP step is the challenge (an mfaTotp ticket, no session)", async () => {
    const owner = await ownerAt(byDefault, BERLIN);
    await withTotp(byDefault, owner);
    const answer = await sessionOf(await signInFrom(byDefault, owner.email, elsewhere(SYDNEY)));
    expect(answer.session).toBeNull();
    expect(answer.mfa?.ticket).toMatch(/^mfaTotp:/);
    const row = await lastRisk(owner.userId);
    expect(row.detail).toMatchObject({ level: "high", decision: "challenge", by: "policy" });
    expect(row.detail.reasons).toEqual(
      expect.arrayContaining(["impossible-travel", "new-country-new-device"]),
    );
  });
});

describe("AUTH_RISK_POLICY low=allow,medium=challenge,high=refuse", () => {
  // Threat: a password stolen by phishing, used from the attacker's machine on the other side of the world.
  it("high is refused with 403 risk-refused in the contract's error shape, audited as a failure", async () => {
    const owner = await ownerAt(strict, BERLIN);
    const from = elsewhere(SYDNEY);
    await expectError(await signInFrom(strict, owner.email, from), 403, "risk-refused");
    const row = await lastRisk(owner.userId);
    expect(row).toMatchObject({ outcome: "failure", reason: "risk-refused", ip: from.address });
    expect(row.detail).toMatchObject({ level: "high", decision: "refuse", by: "policy" });
    expect(row.detail.signals).toMatchObject({
      country: "AU",
      city: "Sydney",
      asn: 1221,
      device: "new",
      newCountry: true,
      travel: { fromCountry: "DE", impossible: true },
    });
    // Coordinates stay out of the record: the city says enough.
    expect(JSON.stringify(row.detail)).not.toMatch(/latitude|151\.21/);
  });

  // Threat: a stranger's new device in the owner's own country, let in without a second step where the app asked.
  it("medium is a challenge: the user's own second factor when they have one", async () => {
    const owner = await ownerAt(strict, BERLIN);
    await withTotp(strict, owner);
    const answer = await sessionOf(await signInFrom(strict, owner.email, elsewhere(HAMBURG)));
    expect(answer.mfa?.ticket).toMatch(/^mfaTotp:/);
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ level: "medium", decision: "challenge" });
  });
});

describe("a challenge for a user without a second factor", () => {
  // Threat: a stranger with the password on a new device, where the account has no second factor to ask: the
  // challenge must still be a proof the stranger lacks (Clerk's "client trust": a code to the owner's mailbox).
  it("is a code mailed to the verified address (mfaEmail ticket), completed at /signin/mfa/email", async () => {
    const owner = await ownerAt(strict, BERLIN);
    await verified(strict, owner);
    const answer = await sessionOf(await signInFrom(strict, owner.email, elsewhere(HAMBURG)));
    expect(answer.session).toBeNull();
    expect(answer.mfa?.ticket).toMatch(/^mfaEmail:/);
    const otp = await mailedCode(strict, owner.email);
    const done = await sessionOf(await strict.post("/signin/mfa/email", { ticket: answer.mfa!.ticket, otp }));
    expect(done.session?.accessToken).toBeTruthy();
  });

  // Threat: a code sent to an address nobody proved goes to whoever typed it: no step can be asked, so no entry.
  it("is refused when the address was never proven, and met by a mailbox first factor itself", async () => {
    const owner = await ownerAt(strict, BERLIN);
    await expectError(await signInFrom(strict, owner.email, elsewhere(HAMBURG)), 403, "risk-refused");
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ level: "medium", decision: "challenge" });
    // An email code from the same new device is itself the mailbox's proof: a second mailed code would repeat it.
    const mailing = service({
      ...BASE,
      AUTH_RISK_POLICY: "medium=challenge",
      AUTH_OTP_EMAIL_ENABLED: "true",
    });
    const from = elsewhere(HAMBURG);
    const headers = { "user-agent": from.userAgent!, "cf-connecting-ip": from.address! };
    await mailing.request("POST", "/signin/otp/email", {
      json: { email: owner.email },
      headers,
      cf: HAMBURG,
    });
    const [mail] = await mailbox(mailing, owner.email);
    const otp = /\b(\d{6})\b/.exec(mail!.text)![1]!;
    const json = { email: owner.email, otp };
    const signedIn = await sessionOf(
      await mailing.request("POST", "/signin/otp/email/verify", { json, headers, cf: HAMBURG }),
    );
    expect(signedIn.session?.accessToken).toBeTruthy();
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      method: "email-otp",
      decision: "challenge",
    });
  });
});

describe("through the Supabase face", () => {
  const face = supabaseService({ ...BASE, AUTH_RISK_POLICY: "medium=challenge" });
  const signInThroughFace = (email: string, from: ReturnType<typeof elsewhere>) =>
    face.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
      body: JSON.stringify({ email, password: "correct horse battery" }),
      headers: {
        apikey: PUBLISHABLE_KEY,
        "content-type": "application/json",
        "user-agent": from.userAgent!,
        "cf-connecting-ip": from.address!,
      },
      cf: from.cf,
    });

  // Threat: the second face as a side door: GoTrue's API has no step for an account without a factor, and a
  // challenge it cannot ask must not become a session.
  it("a challenge of a user without a factor is refused (403); with TOTP it is the face's own aal1 session", async () => {
    const owner = await ownerAt(face, BERLIN);
    await verified(face, owner);
    const refused = await signInThroughFace(owner.email, elsewhere(HAMBURG));
    expect(refused.status).toBe(403);
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ level: "medium", decision: "challenge" });
    await withTotp(face, owner);
    const stepped = await signInThroughFace(owner.email, elsewhere(HAMBURG));
    expect(stepped.status, await stepped.clone().text()).toBe(200);
    const { access_token } = (await stepped.json()) as { access_token: string };
    expect(decodeJwt(access_token).payload.aal).toBe("aal1");
  });
});

describe("a refusal through the Supabase face", () => {
  const refusing = supabaseService({ ...BASE, AUTH_RISK_POLICY: "high=refuse" });

  // Threat: supabase-js apps branch on `error.code`; a refusal read as `unknown` is shown as a fault (or retried), and
  // one read as `invalid_credentials` sends the owner to reset a password that was right.
  it("high=refuse on the password grant: 403 mfa_verification_rejected with the core's message, in both shapes", async () => {
    const owner = await ownerAt(refusing, BERLIN);
    const grant = (from: ReturnType<typeof elsewhere>, version?: string) =>
      refusing.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
        body: JSON.stringify({ email: owner.email, password: "correct horse battery" }),
        headers: {
          apikey: PUBLISHABLE_KEY,
          "content-type": "application/json",
          "user-agent": from.userAgent!,
          "cf-connecting-ip": from.address!,
          ...(version ? { "x-supabase-api-version": version } : {}),
        },
        cf: from.cf,
      });
    const versioned = await grant(elsewhere(SYDNEY), "2024-01-01");
    expect(versioned.status).toBe(403);
    expect(versioned.headers.get("x-sb-error-code")).toBe("mfa_verification_rejected");
    expect(await versioned.json()).toEqual({
      code: "mfa_verification_rejected",
      message: expect.stringMatching(/refused as too risky/),
    });
    const initial = await grant(elsewhere(SYDNEY));
    expect(await initial.json()).toMatchObject({ code: 403, error_code: "mfa_verification_rejected" });
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ level: "high", decision: "refuse" });
  });
});

describe("impossible travel", () => {
  // Threat: the owner signs in at home, and minutes later the same account signs in 16,000 km away.
  it("Berlin, then Sydney a minute later, is high; the distance and the place it came from are recorded", async () => {
    const owner = await ownerAt(strict, BERLIN);
    await withTotp(strict, owner);
    // From the owner's own browser (a stolen cookie too, say): never refused, but asked (see below).
    const answer = await sessionOf(await signInFrom(strict, owner.email, { ...owner.home, cf: SYDNEY }));
    expect(answer.mfa?.ticket).toMatch(/^mfaTotp:/);
    const row = await lastRisk(owner.userId);
    expect(row.detail.reasons).toContain("impossible-travel");
    expect(row.detail.signals.travel).toMatchObject({ fromCountry: "DE", impossible: true });
    expect(row.detail.signals.travel.km).toBeGreaterThan(15_000);
  });

  // Threat (the other way): a real journey taken for an attack would ask every traveller for a code.
  it("a journey an airliner makes is no impossible travel; nearby places never are", () => {
    const berlin = { at: 0, latitude: 52.52, longitude: 13.4, country: "DE" };
    const twoHours = 2 * 3_600_000;
    expect(travelFrom([berlin], { latitude: 48.86, longitude: 2.35 }, twoHours)).toMatchObject({
      impossible: false,
      minutes: 120,
    });
    expect(travelFrom([berlin], { latitude: 48.86, longitude: 2.35 }, 30 * 60_000)?.impossible).toBe(true);
    expect(travelFrom([berlin], { latitude: 53.55, longitude: 9.99 }, 0)?.impossible).toBe(false);
    expect(greatCircleKm(berlin, { latitude: 48.86, longitude: 2.35 })).toBeCloseTo(877, -1);
  });
});

describe("velocity", () => {
  const counted = service({ ...BASE, AUTH_RATE_LIMIT_ENABLE: "true" });

  // Threat: credential stuffing that got past the passwords: one address signing in to account after account.
  it("an address past its count of sign-ins is high; its network's flood only medium", async () => {
    const owner = await ownerAt(counted, BERLIN);
    await withTotp(counted, owner);
    const address = uniqueAddress();
    const asn = 64_500 + Math.floor(Math.random() * 1000);
    // The sign-ins that came before, as the rate limits' own counter holds them (src/rate-limits/rate-limiter.ts).
    const seen = (key: string, count: number) =>
      runInDurableObject(env.RATE_LIMITERS.get(env.RATE_LIMITERS.idFromName(`RISK:${key}`)), (_o, state) => {
        const now = Date.now();
        state.storage.kv.put("windows", { start: now - (now % 600_000), current: count, previous: 0 });
      });
    await seen(`ip:${addressKey(address)}`, 20);
    const answer = await sessionOf(
      await signInFrom(counted, owner.email, { ...elsewhere({ ...BERLIN, asn }), address }),
    );
    expect(answer.mfa?.ticket).toMatch(/^mfaTotp:/);
    let row = await lastRisk(owner.userId);
    expect(row.detail).toMatchObject({ level: "high", signals: { velocity: { address: true, asn: false } } });
    expect(row.detail.reasons).toContain("address-velocity");
    await seen(`asn:${asn}`, 500);
    await sessionOf(await signInFrom(counted, owner.email, { ...owner.home, cf: { ...BERLIN, asn } }));
    row = await lastRisk(owner.userId);
    expect(row.detail).toMatchObject({ level: "medium", reasons: ["asn-velocity"] });
  });

  // Threat (at scale): a Durable Object per address ever seen, which the platform's Rate Limiting binding exists to
  // avoid; and, the binding's count being final, a wrong password counted against the address's velocity.
  it("RISK_VELOCITY_LIMITER bound: the address counted there, after a right password only, in no object", async () => {
    const keys: string[] = [];
    let answer: () => Promise<{ success: boolean }> = async () => ({ success: true });
    const limiter = {
      limit: async ({ key }: { key: string }) => {
        keys.push(key);
        return answer();
      },
    };
    const names: string[] = [];
    const limiters = {
      idFromName: (name: string) => {
        names.push(name);
        return env.RATE_LIMITERS.idFromName(name);
      },
      get: (id: DurableObjectId) => env.RATE_LIMITERS.get(id),
    };
    const bound = service({
      ...BASE,
      AUTH_RATE_LIMIT_ENABLE: "true",
      RISK_VELOCITY_LIMITER: limiter,
      RATE_LIMITERS: limiters,
    });
    const owner = await ownerAt(bound, BERLIN);
    await withTotp(bound, owner);
    const from = elsewhere(BERLIN);
    keys.length = 0;
    names.length = 0;
    await expectError(
      await signInFrom(bound, owner.email, from, "not the password"),
      401,
      "invalid-email-password",
    );
    expect(keys).toEqual([]);
    // Allowed: a new device at home, medium, the address not past its velocity.
    await sessionOf(await signInFrom(bound, owner.email, from));
    expect(keys).toEqual([`ip:${addressKey(from.address!)}`]);
    // No object for the address (the network's object is counted, and a wrong password's count taken back).
    expect(names).toContain(`RISK:asn:${BERLIN.asn}`);
    expect(names.filter((name) => name.startsWith("RISK:ip:"))).toEqual([]);
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "medium",
      signals: { velocity: { address: false } },
    });
    // Refused by the binding: the address is past its velocity, high (the TOTP step).
    answer = async () => ({ success: false });
    expect((await sessionOf(await signInFrom(bound, owner.email, from))).mfa?.ticket).toMatch(/^mfaTotp:/);
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "high",
      signals: { velocity: { address: true } },
    });
    // A binding that fails: the sign-in fails closed with 503, as a failing counter object does.
    answer = async () => Promise.reject(new Error("binding down"));
    await expectError(await signInFrom(bound, owner.email, from), 503, "service-unavailable");
  });
});

describe("Bot Management's score", () => {
  // Threat: a scripted sign-in with a right password (a bot replaying a leaked list) passing as a person.
  it("a score under 10 is high, under 30 medium, when the zone has Bot Management", async () => {
    const owner = await ownerAt(strict, BERLIN);
    await withTotp(strict, owner);
    await signInFrom(strict, owner.email, {
      ...owner.home,
      cf: { ...BERLIN, botManagement: { score: 2 } } as never,
    });
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ level: "high", reasons: ["bot"] });
    await signInFrom(strict, owner.email, {
      ...owner.home,
      cf: { ...BERLIN, botManagement: { score: 20 } } as never,
    });
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "medium",
      reasons: ["likely-bot"],
      signals: { botScore: 20 },
    });
  });
});

describe("the owner's own browser is never refused (the lockout lesson)", () => {
  const refuseAll = service({ ...BASE, AUTH_RISK_POLICY: "low=refuse,medium=refuse,high=refuse" });

  // Threat: someone else's behaviour (an attacker's travel, a flood from the network, a policy set too hard) locking
  // the owner out of their account on the browser they always use, with the right password.
  it("a known device with the right password gets at worst the second step, whatever the policy says", async () => {
    const known = await ownerAt(byDefault, BERLIN);
    await withTotp(byDefault, known);
    // Its cookie, from the other side of the world (the owner travelling, or a flood at home): the second step.
    const answer = await sessionOf(await signInFrom(refuseAll, known.email, { ...known.home, cf: SYDNEY }));
    expect(answer.mfa?.ticket).toMatch(/^mfaTotp:/);
    expect((await lastRisk(known.userId)).detail).toMatchObject({
      level: "high",
      decision: "challenge",
      capped: "known-device",
    });
    // The same browser and network without the cookie is not that device (a neighbour's may look the same): refused.
    const { cookie: _, ...withoutCookie } = known.home;
    await expectError(await signInFrom(refuseAll, known.email, withoutCookie), 403, "risk-refused");
    expect((await lastRisk(known.userId)).detail).toMatchObject({
      decision: "refuse",
      signals: { device: "network" },
    });
    // The same password from a stranger's browser: refused.
    await expectError(await signInFrom(refuseAll, known.email, elsewhere(SYDNEY)), 403, "risk-refused");
  });
});

describe("the new-device mail", () => {
  // Threat: the owner told "a new device signed in" with nothing to judge it by (where, and how unusual it was).
  it("names the place and the risk level, in the user's language", async () => {
    const owner = await ownerAt(byDefault, BERLIN);
    await sessionOf(await signInFrom(byDefault, owner.email, elsewhere(HAMBURG)));
    const [mail] = (await mailbox(byDefault, owner.email)).filter((m) => /new device/.test(m.text));
    expect(mail?.text).toContain("Hamburg, DE");
    expect(mail?.text).toContain("We rated this sign-in's risk as medium.");
    expect(mail?.html).toContain("We rated this sign-in&#39;s risk as medium.");
  });
});

describe("disposable mail domains", () => {
  const blocking = service({
    ...BASE,
    AUTH_RISK_BLOCK_DISPOSABLE_EMAILS: "true",
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  });
  const burner = () => `someone-${crypto.randomUUID().slice(0, 8)}@mailinator.com`;

  // Threat: throwaway accounts by the thousand (trial abuse, spam) from burner addresses.
  it("with AUTH_RISK_BLOCK_DISPOSABLE_EMAILS=true a burner address makes no account, whichever way in", async () => {
    const email = burner();
    await expectError(
      await blocking.post("/signup/email-password", { email, password: "correct horse battery" }),
      403,
      "risk-refused",
    );
    await expectError(await blocking.post("/signin/passwordless/email", { email }), 403, "risk-refused");
    // A subdomain of a listed domain is the same service.
    const sub = `x-${crypto.randomUUID().slice(0, 8)}@eu.mailinator.com`;
    await expectError(
      await blocking.post("/signup/email-password", { email: sub, password: "x".repeat(12) }),
      403,
      "risk-refused",
    );
    expect(await mailbox(blocking, email)).toEqual([]);
  });

  // Threat (the other way): a list that refuses outright where the operator only wanted it weighed.
  it("without it the address signs up, and its sign-ins carry the signal (medium)", async () => {
    const owner = await ownerAt(byDefault, BERLIN, burner());
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "medium",
      reasons: ["disposable-email"],
      signals: { disposableEmail: true, device: "network" },
    });
    expect((await riskRows(owner.userId)).length).toBe(1);
  });
});
