// The app's BEFORE_USER_CREATED hook (contract move-in §5.3): every self-service way a user is born asks the app
// first, with the User resource about to exist, signed per Standard Webhooks. The app can refuse with its own
// message (403 `forbidden`); a hook that does not answer properly refuses too (503 `service-unavailable`), because
// the app decides and a decision that did not come is not a yes. The admin API and the import do not ask.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { expectError, mailbox, NO_VERIFICATION, PASSWORD, service, uniqueEmail } from "../helpers";
import { importUsers, nhostUser } from "../move-in/support";
import { FAKE_PROVIDERS, signInWith } from "../providers/support";
import { uniquePhone } from "../support/phones";
import { allInShards, userD1 } from "../support/shards";
import { answers, hookEvents, hookReceiver, type Scenario, usersWithEmail } from "./support";

const REFUSAL = "Sign-ups from blocked.example are closed: ask your administrator";
const GUESTS = "Guests are not welcome here";
const refusedPhones = new Set<string>();

/** The app's policy: no addresses at blocked.example, no anonymous users, no number the test marked refused. */
const policy: Scenario = ({ user }) => {
  if (typeof user.email === "string" && user.email.endsWith("@blocked.example")) {
    return Response.json({ decision: "reject", message: REFUSAL });
  }
  if (user.isAnonymous) return Response.json({ decision: "reject", message: GUESTS });
  if (refusedPhones.has(user.phoneNumber)) return Response.json({ decision: "reject", message: "no" });
  return Response.json({ decision: "continue" });
};

const blocked = () => `someone-${crypto.randomUUID().slice(0, 8)}@blocked.example`;

const WAYS_IN = {
  ...FAKE_PROVIDERS,
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
};

describe("BEFORE_USER_CREATED refuses with the app's message, whichever way in", () => {
  const receiver = hookReceiver({ BEFORE_USER_CREATED: policy });
  const svc = service({ ...WAYS_IN, ...receiver.bindings });

  // Threat: a way in that skips the app's check (the app's terms, its domain rules, its fraud checks) lets anyone
  // in through that door.
  it.each([
    ["/signup/email-password", (email: string) => ({ email, password: PASSWORD })],
    ["/signin/passwordless/email", (email: string) => ({ email })],
    ["/signup/passwordless/email", (email: string) => ({ email })],
    ["/signin/otp/email", (email: string) => ({ email })],
  ] as const)("%s: 403 forbidden with the app's message, no user, no mail", async (path, body) => {
    const email = blocked();
    const { message } = await expectError(await svc.post(path, body(email)), 403, "forbidden");
    expect(message).toBe(REFUSAL);
    expect(await usersWithEmail(email)).toBe(0);
    expect(await mailbox(svc, email)).toEqual([]);
    const [asked] = receiver.callsOf("BEFORE_USER_CREATED").filter((p) => p.user.email === email);
    expect(asked.user).toMatchObject({
      email,
      isAnonymous: false,
      emailVerified: false,
      roles: ["user", "me"],
    });
    expect(await hookEvents(asked.user.id)).toEqual([
      { hook: "BEFORE_USER_CREATED", outcome: "reject", status: 200, ms: expect.any(Number) },
    ]);
    expect(receiver.unverified).toEqual([]);
  });

  it("an SMS sign-in to a number the app refuses: 403, no user, no text", async () => {
    const phoneNumber = uniquePhone();
    refusedPhones.add(phoneNumber);
    await expectError(await svc.post("/signin/passwordless/sms", { phoneNumber }), 403, "forbidden");
    expect(await allInShards("SELECT id FROM users WHERE phone_number = ?", phoneNumber)).toEqual([]);
    const sent = await (await svc.get(`/dev/sms?to=${encodeURIComponent(phoneNumber)}`)).json();
    expect(sent).toEqual([]);
  });

  it("anonymous sign-in: 403 with the app's message, no anonymous user", async () => {
    const { message } = await expectError(await svc.post("/signin/anonymous", {}), 403, "forbidden");
    expect(message).toBe(GUESTS);
    const [asked] = receiver.callsOf("BEFORE_USER_CREATED").filter((p) => p.user.isAnonymous);
    expect(asked.user.email).toBeUndefined();
    expect(await allInShards("SELECT id FROM users WHERE id = ?", asked.user.id)).toEqual([]);
  });

  // Threat: the guest door as a way around the app's rules: sign in anonymously (nothing to refuse yet), then upgrade
  // to an address the app refuses.
  it("an anonymous user upgraded to a refused address: 403, still anonymous", async () => {
    const guests = hookReceiver({
      BEFORE_USER_CREATED: (payload, request) =>
        payload.user.isAnonymous ? Response.json({ decision: "continue" }) : policy(payload, request),
    });
    const open = service({ ...WAYS_IN, ...guests.bindings });
    const anonymous = await open.post("/signin/anonymous", {});
    const { session } = (await anonymous.json()) as {
      session: { accessToken: string; user: { id: string } };
    };
    const email = blocked();
    const upgrade = await open.request("POST", "/user/deanonymize", {
      json: { signInMethod: "email-password", email, password: PASSWORD },
      token: session.accessToken,
    });
    const { message } = await expectError(upgrade, 403, "forbidden");
    expect(message).toBe(REFUSAL);
    const row = await userD1(session.user.id)
      .prepare("SELECT is_anonymous, email FROM users WHERE id = ?")
      .bind(session.user.id)
      .first();
    expect(row).toEqual({ is_anonymous: 1, email: null });
    const asked = guests.callsOf("BEFORE_USER_CREATED").map((p) => p.user);
    expect(asked).toEqual([
      expect.objectContaining({ id: session.user.id, isAnonymous: true }),
      expect.objectContaining({ id: session.user.id, isAnonymous: false, email, roles: ["user", "me"] }),
    ]);
  });

  it("a provider sign-in (GitHub): back to the app with error=forbidden and the message, no user", async () => {
    const email = blocked();
    const { back } = await signInWith(
      svc,
      "github",
      {},
      { fake_id: String(Math.floor(Math.random() * 1e9)), fake_email: email },
    );
    expect(back.searchParams.get("error")).toBe("forbidden");
    expect(back.searchParams.get("errorDescription")).toBe(REFUSAL);
    expect(back.searchParams.get("refreshToken")).toBeNull();
    expect(await usersWithEmail(email)).toBe(0);
  });

  it("a passkey sign-up: the ceremony's second step is refused with the app's message, no user, no key", async () => {
    const passkeys = service({ ...NO_VERIFICATION, AUTH_WEBAUTHN_ENABLED: "true", ...receiver.bindings });
    const email = blocked();
    const options = await (await passkeys.post("/signup/webauthn", { email })).json();
    const credential = await new SoftwareAuthenticator("http://localhost:3000", "localhost").create(
      options as never,
    );
    const { message } = await expectError(
      await passkeys.post("/signup/webauthn/verify", { credential }),
      403,
      "forbidden",
    );
    expect(message).toBe(REFUSAL);
    expect(await usersWithEmail(email)).toBe(0);
    const keys = await allInShards(
      "SELECT id FROM security_keys WHERE credential_id = ?",
      (credential as { id: string }).id,
    );
    expect(keys).toEqual([]);
  });

  it("continue: the user is created with the id and the fields the app saw", async () => {
    const email = uniqueEmail("welcome");
    const response = await svc.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { displayName: "Ana", metadata: { plan: "team" } },
    });
    expect(response.status).toBe(200);
    const { session } = (await response.json()) as { session: { user: { id: string } } };
    const [asked] = receiver.callsOf("BEFORE_USER_CREATED").filter((p) => p.user.email === email);
    expect(asked).toEqual({
      user: {
        id: session.user.id,
        createdAt: expect.any(String),
        displayName: "Ana",
        avatarUrl: "",
        locale: "en",
        email,
        emailVerified: false,
        phoneNumberVerified: false,
        defaultRole: "user",
        roles: ["user", "me"],
        isAnonymous: false,
        activeMfaType: null,
        metadata: { plan: "team" },
      },
    });
    expect(await hookEvents(session.user.id)).toEqual([
      { hook: "BEFORE_USER_CREATED", outcome: "continue", status: 200, ms: expect.any(Number) },
    ]);
  });

  it("an existing user signing in again is not asked: only a birth is", async () => {
    const email = uniqueEmail("again");
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    expect(receiver.callsOf("BEFORE_USER_CREATED").filter((p) => p.user.email === email)).toHaveLength(1);
  });
});

describe("under a crowd", () => {
  it("200 sign-ups in flight, each asked once with its own signed call: all 200, every user created once", async () => {
    const receiver = hookReceiver({ BEFORE_USER_CREATED: answers.json({ decision: "continue" }) });
    const crowd = service({ ...NO_VERIFICATION, ...receiver.bindings });
    const emails = Array.from({ length: 200 }, () => uniqueEmail("crowd"));
    const answered = await Promise.all(
      emails.map((email) => crowd.post("/signup/email-password", { email, password: PASSWORD })),
    );
    expect(answered.map((r) => r.status)).toEqual(Array(200).fill(200));
    expect(receiver.unverified).toEqual([]);
    const asked = receiver.callsOf("BEFORE_USER_CREATED").map((p) => p.user.email);
    expect(asked.sort()).toEqual([...emails].sort());
    const created = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM users WHERE email IN (SELECT value FROM json_each(?))",
      JSON.stringify(emails.map((e) => e.toLowerCase())),
    );
    expect(created.reduce((sum, row) => sum + row.n, 0)).toBe(200);
  }, 60_000);
});

describe("a 204 goes on", () => {
  it("the user is created", async () => {
    const receiver = hookReceiver({ BEFORE_USER_CREATED: answers.noContent() });
    const svc = service({ ...NO_VERIFICATION, ...receiver.bindings });
    const email = uniqueEmail("no-content");
    expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
    expect(await usersWithEmail(email)).toBe(1);
  });
});

describe("a hook that does not answer properly refuses (fail closed)", () => {
  // Threat: a receiver that is down, slow or broken must not let sign-ups through unchecked: an attacker who can
  // overload the app's endpoint would otherwise switch its checks off.
  it.each([
    ["times out", answers.timedOut(), "timeout", null],
    ["is unreachable", answers.unreachable(), "unreachable", null],
    ["answers 500", answers.status(500), "bad-status", 500],
    ["answers a redirect", answers.status(302), "bad-status", 302],
    ["answers garbage", answers.garbage(), "malformed", 200],
    ["answers an empty 200", answers.json(undefined), "malformed", 200],
    ["answers another decision", answers.json({ decision: "maybe" }), "malformed", 200],
    ["answers JSON that is not an object", answers.json(["continue"]), "malformed", 200],
  ] as const)(
    "when it %s: 503 service-unavailable, no user, no mail",
    async (_, scenario, outcome, status) => {
      // Verification on: a created user would be mailed.
      const receiver = hookReceiver({ BEFORE_USER_CREATED: scenario });
      const svc = service(receiver.bindings);
      const email = uniqueEmail("fault");
      const response = await svc.post("/signup/email-password", { email, password: PASSWORD });
      expect(response.headers.get("retry-after")).toBe("5");
      await expectError(response, 503, "service-unavailable");
      expect(await usersWithEmail(email)).toBe(0);
      expect(await mailbox(svc, email)).toEqual([]);
      const [asked] = receiver.callsOf("BEFORE_USER_CREATED");
      expect(await hookEvents(asked.user.id)).toEqual([
        {
          hook: "BEFORE_USER_CREATED",
          outcome,
          status,
          ms: expect.any(Number),
          reason: expect.any(String),
        },
      ]);
    },
  );

  it("a signature the app cannot verify (another secret) is answered 401: refused, not created", async () => {
    const receiver = hookReceiver({ BEFORE_USER_CREATED: policy });
    const svc = service({
      ...NO_VERIFICATION,
      ...receiver.bindings,
      AUTH_HOOK_BEFORE_USER_CREATED_SECRET: `whsec_${btoa("another secret of 24 bytes!!")}`,
    });
    const email = uniqueEmail("wrong-secret");
    await expectError(
      await svc.post("/signup/email-password", { email, password: PASSWORD }),
      503,
      "service-unavailable",
    );
    expect(receiver.unverified).toEqual(["BEFORE_USER_CREATED: No matching signature found"]);
    expect(await usersWithEmail(email)).toBe(0);
  });
});

describe("the operator's ways in do not ask the app", () => {
  const receiver = hookReceiver({ BEFORE_USER_CREATED: answers.json({ decision: "reject", message: "no" }) });
  const svc = service({ ...NO_VERIFICATION, ...receiver.bindings });
  const admin = { "x-hasura-admin-secret": env.AUTH_ADMIN_SECRET as string };

  it("the admin API creates the user", async () => {
    const email = blocked();
    const response = await svc.request("POST", "/admin/users", {
      json: { email, password: PASSWORD },
      headers: admin,
    });
    expect(response.status).toBe(201);
    expect(await usersWithEmail(email)).toBe(1);
    expect(receiver.calls).toEqual([]);
  });

  it("the import from Nhost moves the user in", async () => {
    const user = await nhostUser();
    const { results } = await importUsers(svc, [user.bundle]);
    expect(results[0]!.outcome).not.toBe("skipped");
    expect(await usersWithEmail(user.email)).toBe(1);
    expect(receiver.calls).toEqual([]);
  });
});
