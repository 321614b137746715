// The app's BEFORE_SIGN_IN hook (issue 47, docs/risk.md): signed as every hook, told who signs in, how, the signals
// and the level; its answer replaces the policy's, and an answer that does not come (garbage, an error, a hang)
// is AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK's: the policy's own decision, or a refusal. Never an open door. And the
// settings: a policy or a fallback that cannot be read stops the start with the variable's name.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { getConfig } from "../../src/runtime/config";
import { expectError, NO_VERIFICATION, SERVER, service } from "../helpers";
import { answers, hookEvents, hookReceiver, type Scenario } from "../hooks/support";
import { BERLIN, elsewhere, HAMBURG, lastRisk, ownerAt, SYDNEY, signInFrom, verified } from "./support";

const BASE = { ...NO_VERIFICATION };
/** What the app answers, per test: set before each sign-in. */
let scenario: Scenario = answers.json({ decision: "allow" });
const receiver = hookReceiver({ BEFORE_SIGN_IN: (payload, request) => scenario(payload, request) });
const hooked = service({ ...BASE, ...receiver.bindings });
const hookedRefusing = service({
  ...BASE,
  ...receiver.bindings,
  AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK: "refuse",
});

const status = async (response: Response) => {
  expect([200, 403], await response.clone().text()).toContain(response.status);
  return response.status;
};

describe("the hook decides", () => {
  // Threat: the app knows what the service cannot (a fraud score, a banned customer) and must be able to say no to a
  // sign-in the policy would let in; and yes to one its own knowledge clears.
  it("its refusal of a low-risk sign-in refuses; its allow of a high-risk one allows; it is told everything", async () => {
    scenario = answers.json({ decision: "allow" });
    const owner = await ownerAt(hooked, BERLIN);
    scenario = answers.json({ decision: "refuse", reason: "chargeback on file" });
    // Low: the owner's browser and network, at home; without its cookie (an app that sends none), so not capped.
    const { cookie: _, ...sameNetwork } = owner.home;
    await expectError(await signInFrom(hooked, owner.email, sameNetwork), 403, "risk-refused");
    const refused = await lastRisk(owner.userId);
    expect(refused.detail).toMatchObject({
      level: "low",
      decision: "refuse",
      by: "hook",
      hookReason: "chargeback on file",
    });
    // High (new country, new device, impossible travel): the policy would challenge; the app clears it.
    scenario = answers.json({ decision: "allow" });
    const from = elsewhere(SYDNEY);
    expect(await status(await signInFrom(hooked, owner.email, from))).toBe(200);
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      level: "high",
      decision: "allow",
      by: "hook",
    });
    const payload = receiver.callsOf("BEFORE_SIGN_IN").at(-1);
    expect(payload).toMatchObject({
      type: "before-sign-in",
      user: { id: owner.userId, email: owner.email },
      method: "email-password",
      level: "high",
      signals: { country: "AU", city: "Sydney", asn: 1221, device: "new", newCountry: true },
    });
    expect(payload.user.passwordHash).toBeUndefined();
    expect(receiver.unverified).toEqual([]);
    const calls = (await hookEvents(owner.userId)).filter((e) => e.hook === "BEFORE_SIGN_IN");
    expect(calls.map((e) => e.outcome)).toEqual(["allow", "refuse", "allow"]);
  });

  // Threat: an operator asked "why was I refused?" who cannot see the answer (and guesses, or turns the policy off).
  it("the console shows the user's recent risk decisions: level, why, decision, who decided, where", async () => {
    scenario = answers.json({ decision: "allow" });
    const owner = await ownerAt(hooked, BERLIN);
    scenario = answers.json({ decision: "refuse", reason: "chargeback <on> file" });
    const from = elsewhere(SYDNEY);
    await expectError(await signInFrom(hooked, owner.email, from), 403, "risk-refused");
    const login = await hooked.request("POST", "/admin/console/login", {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await hooked.request("GET", `/admin/console/users/${owner.userId}`, { headers: { cookie } });
    const html = await page.text();
    const section = html.slice(
      html.indexOf('id="risk"'),
      html.indexOf("</table>", html.indexOf('id="risk"')),
    );
    expect(section).toContain("Recent risk decisions");
    expect(section).toMatch(/high<br><small class="muted">[^<]*impossible-travel/);
    expect(section).toContain('<span class="badge off">refused</span>');
    // The app's reason, escaped: it is the app's text, not the console's markup.
    expect(section).toContain("by the app&#39;s hook: chargeback &lt;on&gt; file");
    expect(section).toContain("Sydney, AU · AS1221");
    expect(section).toContain(from.address);
  });

  // Threat: the hook is the app's, but the owner on their own browser must not be locked out by it either.
  it("its refusal of the owner's own browser is a second step at worst", async () => {
    scenario = answers.json({ decision: "allow" });
    const owner = await ownerAt(hooked, BERLIN);
    await verified(hooked, owner);
    scenario = answers.json({ decision: "refuse" });
    // No second factor of their own: the challenge is a code mailed to their verified address.
    const answer = await signInFrom(hooked, owner.email, { ...owner.home, cf: BERLIN });
    expect((await lastRisk(owner.userId)).detail).toMatchObject({
      decision: "challenge",
      capped: "known-device",
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { mfa: { ticket: string } }).mfa.ticket).toMatch(/^mfaEmail:/);
  });
});

describe("a hook that does not answer as it must", () => {
  // Threat: a hook that fails open: an attacker who can make the app's endpoint fail (or slow) walks in.
  it("garbage: the policy's own decision (fallback `policy`), or a refusal (fallback `refuse`)", async () => {
    scenario = answers.json({ decision: "allow" });
    const owner = await ownerAt(hooked, BERLIN);
    for (const bad of [
      answers.garbage(),
      answers.json({ decision: "maybe" }),
      answers.json({ decision: "allow", reason: 42 }),
      answers.status(500),
    ]) {
      scenario = bad;
      // Medium (a new device at home): the default policy allows it.
      expect(await status(await signInFrom(hooked, owner.email, elsewhere(HAMBURG)))).toBe(200);
      expect((await lastRisk(owner.userId)).detail).toMatchObject({
        level: "medium",
        decision: "allow",
        by: "hook-fallback",
      });
      await expectError(
        await signInFrom(hookedRefusing, owner.email, elsewhere(HAMBURG)),
        403,
        "risk-refused",
      );
      expect((await lastRisk(owner.userId)).detail).toMatchObject({
        decision: "refuse",
        by: "hook-fallback",
      });
    }
    const outcomes = (await hookEvents(owner.userId)).map((e) => e.outcome);
    expect(outcomes).toEqual(expect.arrayContaining(["malformed", "bad-status"]));
  });

  // Threat: the same with a hook that hangs: the sign-in waits for ever, or worse, goes on without it.
  it("a timeout is the fallback's too", async () => {
    scenario = answers.json({ decision: "allow" });
    const owner = await ownerAt(hooked, BERLIN);
    scenario = answers.timedOut();
    await expectError(await signInFrom(hookedRefusing, owner.email, elsewhere(HAMBURG)), 403, "risk-refused");
    expect((await lastRisk(owner.userId)).detail).toMatchObject({ decision: "refuse", by: "hook-fallback" });
    expect((await hookEvents(owner.userId)).at(-1)).toMatchObject({
      hook: "BEFORE_SIGN_IN",
      outcome: "timeout",
    });
  });
});

describe("settings, checked at start", () => {
  // Threat: a typo in the policy (or the fallback) quietly running a policy nobody chose.
  it.each([
    ["low=allow,medium=maybe", /AUTH_RISK_POLICY gives "medium" the decision "maybe"/],
    ["low=allow,extreme=refuse", /AUTH_RISK_POLICY names the level "extreme"/],
    ["low=allow,low=refuse", /AUTH_RISK_POLICY names "low" twice/],
    ["high", /AUTH_RISK_POLICY has "high", not level=decision/],
    ["medium=refuse,high=allow", /AUTH_RISK_POLICY gives "high" \(allow\) less than "medium" \(refuse\)/],
  ])("AUTH_RISK_POLICY=%s stops the start, naming the variable", (policy, message) => {
    expect(() => getConfig({ ...env, AUTH_RISK_POLICY: policy })).toThrow(ConfigError);
    expect(() => getConfig({ ...env, AUTH_RISK_POLICY: policy })).toThrow(message);
  });

  // Threat: a half-set hook (URL without its secret) or a fallback spelled `allow`: an open door by configuration.
  it("the default and a partial policy; a bad fallback or a hook without its secret stops the start", () => {
    expect(getConfig({ ...env }).risk.policy).toEqual({ low: "allow", medium: "allow", high: "challenge" });
    expect(getConfig({ ...env, AUTH_RISK_POLICY: " high = refuse " }).risk.policy).toEqual({
      low: "allow",
      medium: "allow",
      high: "refuse",
    });
    expect(() => getConfig({ ...env, AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK: "allow" })).toThrow(
      /AUTH_HOOK_BEFORE_SIGN_IN_FALLBACK must be policy or refuse/,
    );
    expect(() => getConfig({ ...env, AUTH_HOOK_BEFORE_SIGN_IN_URL: "https://hooks.app.example/x" })).toThrow(
      /AUTH_HOOK_BEFORE_SIGN_IN_URL and AUTH_HOOK_BEFORE_SIGN_IN_SECRET must be set together/,
    );
    expect(() => getConfig({ ...env, AUTH_RISK_BLOCK_DISPOSABLE_EMAILS: "yes" })).toThrow(
      /AUTH_RISK_BLOCK_DISPOSABLE_EMAILS/,
    );
  });
});
