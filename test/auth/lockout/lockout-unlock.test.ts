// The mailed unlock link of the lockout (contract §13, docs/protection.md "Lockout"): a page in the user's language
// that asks first, then unlocks the factor the link was mailed for, once. Threats: a link used twice (single use,
// consumed atomically in the object); a mail scanner fetching the link spending it (GET only asks); a cross-site form
// unlocking (Origin check); a malformed or guessed link answered with a 500 or unlocking anything.
import { describe, expect, it } from "vitest";
import {
  auditTypesOf,
  expectError,
  type Mail,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  PREFIX,
  SERVER,
  service,
  signUp,
  uniqueEmail,
} from "../../helpers";

const svc = service({ ...NO_VERIFICATION, AUTH_LOCALE_ALLOWED_LOCALES: "en,de,ja" });
const WRONG = "not the password at all";
const ORIGIN = new URL(SERVER).origin;

const signIn = (email: string, password: string) => svc.post("/signin/email-password", { email, password });

/** Locks the password of `email` and answers the lockout mail's link as a path under the prefix. */
async function lockAndGetLink(email: string): Promise<{ path: string; ticket: string; mail: Mail }> {
  for (let i = 0; i < 10; i++) await signIn(email, WRONG);
  await expectError(await signIn(email, PASSWORD), 429, "account-locked");
  const mail = (await mailbox(svc, email)).find((m) => m.text.includes("/unlock?ticket="));
  const url = new URL(/(http\S+\/unlock\?ticket=\S+)/.exec(mail!.text)![1]!);
  return {
    path: `${url.pathname.replace(PREFIX, "")}${url.search}`,
    ticket: url.searchParams.get("ticket")!,
    mail: mail!,
  };
}

const postUnlock = (ticket: string, origin: string = ORIGIN) =>
  svc.request("POST", "/unlock", {
    body: new URLSearchParams({ ticket }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin },
  });

describe("the mailed unlock link", () => {
  // ~12 argon2id checks and a sign-up: ~1.5 s on a quiet machine, several seconds on a busy one.
  it("asks first (a GET spends nothing), unlocks once, and forgets the failures", async () => {
    const { user } = await signUp(svc);
    const { path, ticket } = await lockAndGetLink(user.email);
    for (let i = 0; i < 2; i++) {
      const page = await svc.get(path);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
      const text = await page.text();
      expect(text).toContain('<html lang="en"');
      expect(text).toContain("Unlock signing in");
      expect(text).toContain(`<input type="hidden" name="ticket" value="${ticket}">`);
      expect(text).toContain(`action="${PREFIX}/unlock"`);
    }
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
    const done = await postUnlock(ticket);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Signing in is unlocked");
    expect(await auditTypesOf(user.id)).toContain("signin.unlocked");
    // Used: the second time is refused, and unlocks nothing more.
    const again = await postUnlock(ticket);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("This link no longer works");
    // The failures were forgotten with the lock: nine more wrong ones lock nothing.
    for (let i = 0; i < 9; i++)
      await expectError(await signIn(user.email, WRONG), 401, "invalid-email-password");
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  }, 30_000);

  it("speaks the user's language, in the mail and on the page", async () => {
    const email = uniqueEmail("de");
    const response = await svc.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { locale: "de" },
    });
    expect(response.status).toBe(200);
    const { path, ticket, mail } = await lockAndGetLink(email);
    expect(mail.subject).toBe("Die Anmeldung bei Ihrem Konto ist pausiert");
    expect(mail.text).toContain("mit Ihrem Passwort bei Ihrem Konto anzumelden");
    expect(mail.text).toContain("für 15 Minuten pausiert");
    const page = await svc.request("GET", path, { headers: { "accept-language": "ja" } });
    const text = await page.text();
    expect(text).toContain('<html lang="de"');
    expect(text).toContain("Anmeldung entsperren");
    const done = await postUnlock(ticket);
    expect(await done.text()).toContain("Die Anmeldung ist entsperrt");
  }, 30_000);

  // Threat: a page on another site posting the form (with a ticket it somehow holds) unlocking the account.
  it("a form posted from another site unlocks nothing; the link still works from its own page", async () => {
    const { user } = await signUp(svc);
    const { ticket } = await lockAndGetLink(user.email);
    const foreign = await postUnlock(ticket, "https://evil.example");
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("sent from another site");
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
    expect((await postUnlock(ticket)).status).toBe(200);
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  }, 30_000);

  // Threat: a guessed, truncated or hostile ticket answered with a 500, or unlocking someone.
  it("a malformed or unknown ticket is a 400 page, never a 500", async () => {
    const incomplete = await svc.get("/unlock");
    expect(incomplete.status).toBe(400);
    expect(await incomplete.text()).toContain("This link is incomplete");
    expect((await svc.get("/unlock?ticket=%3Cscript%3E")).status).toBe(400);
    for (const ticket of [
      "",
      "x".repeat(500),
      `${crypto.randomUUID()}.${"0".repeat(64)}`,
      `${crypto.randomUUID()}.${"z".repeat(64)}`,
      "../../admin",
    ]) {
      const answer = await postUnlock(ticket);
      expect(answer.status, ticket).toBe(400);
      expect(await answer.text()).not.toContain(ticket.slice(0, 50) || "\u0000");
    }
  });
});
