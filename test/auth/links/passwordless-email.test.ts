import { describe, expect, it } from "vitest";
import {
  expectError,
  follow,
  mailbox,
  service,
  sessionFromRefresh,
  uniqueEmail,
  verifyPath,
} from "../../helpers";

const svc = service({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true", AUTH_LOCALE_ALLOWED_LOCALES: "en,fr,de" });
const magicLink = (body: unknown, s = svc) => s.post("/signin/passwordless/email", body);

describe("POST /signin/passwordless/email (magic link)", () => {
  it("creates the user on first use, mails a link, and the link signs in with a verified email", async () => {
    const email = uniqueEmail();
    const response = await magicLink({ email, options: { displayName: "Magic", metadata: { m: 1 } } });
    expect(await response.json()).toBe("OK");
    const [mail] = await mailbox(svc, email);
    expect(mail!.subject).toBe("Your sign-in link");
    const path = verifyPath(mail!);
    expect(path).toMatch(/ticket=passwordlessEmail%3A/);
    const params = await follow(svc, path);
    expect(params.get("type")).toBe("signinPasswordless");
    const session = await sessionFromRefresh(svc, params.get("refreshToken")!);
    expect(session.user).toMatchObject({
      email,
      emailVerified: true,
      displayName: "Magic",
      metadata: { m: 1 },
    });
    // Single use.
    expect((await follow(svc, path)).get("error")).toBe("invalid-ticket");
  });

  it("signs in an existing user without creating another, and a newer link replaces the older", async () => {
    const email = uniqueEmail();
    await magicLink({ email });
    await magicLink({ email });
    const [newer, older] = await mailbox(svc, email);
    expect((await follow(svc, verifyPath(older!))).get("error")).toBe("invalid-ticket");
    const session = await sessionFromRefresh(
      svc,
      (await follow(svc, verifyPath(newer!))).get("refreshToken")!,
    );
    await magicLink({ email });
    const again = await sessionFromRefresh(
      svc,
      (await follow(svc, verifyPath((await mailbox(svc, email))[0]!))).get("refreshToken")!,
    );
    expect(again.user.id).toBe(session.user.id);
  });

  it("mails in the user's locale, falling back to the default locale", async () => {
    const email = uniqueEmail();
    await magicLink({ email, options: { locale: "fr" } });
    expect((await mailbox(svc, email))[0]!.subject).toBe("Votre lien de connexion");
    const other = uniqueEmail();
    await magicLink({ email: other, options: { locale: "xx" } });
    expect((await mailbox(svc, other))[0]!.subject).toBe("Your sign-in link");
  });

  it("answers 409 when switched off; with sign-up off a new address gets OK and no mail, the sign-up variant 403", async () => {
    await expectError(await magicLink({ email: uniqueEmail() }, service()), 409, "disabled-endpoint");
    const closed = service({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true", AUTH_DISABLE_SIGNUP: "true" });
    // Threat: enumeration. A 403 for unknown addresses only would tell which addresses have accounts.
    const unknown = uniqueEmail();
    const answer = await magicLink({ email: unknown }, closed);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toBe("OK");
    expect(await mailbox(svc, unknown)).toHaveLength(0);
    await expectError(
      await closed.post("/signup/passwordless/email", { email: uniqueEmail() }),
      403,
      "signup-disabled",
    );
  });

  it("refuses a foreign redirectTo and blocked emails", async () => {
    await expectError(
      await magicLink({ email: uniqueEmail(), options: { redirectTo: "https://evil.example" } }),
      400,
      "redirectTo-not-allowed",
    );
    const blocked = service({
      AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
      AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS: "example.com",
    });
    await expectError(await magicLink({ email: uniqueEmail() }, blocked), 401, "invalid-email-password");
  });
});
