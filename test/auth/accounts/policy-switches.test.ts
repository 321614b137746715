import { describe, expect, it } from "vitest";
import { expectError, mailbox, NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../../helpers";

describe("AUTH_PASSWORD_HIBP_ENABLED", () => {
  const hibp = service({
    ...NO_VERIFICATION,
    AUTH_PASSWORD_HIBP_ENABLED: "true",
    AUTH_PASSWORD_HIBP_URL: "https://hibp.test/range",
  });

  it("refuses a breached password at sign-up, reset and change; accepts others", async () => {
    await expectError(
      await hibp.post("/signup/email-password", { email: uniqueEmail(), password: "password123" }),
      400,
      "password-in-hibp-database",
    );
    const session = await signUp(hibp, uniqueEmail(), undefined, "not in any breach list");
    await expectError(
      await hibp.post("/user/password", { newPassword: PASSWORD }, session.accessToken),
      400,
      "password-in-hibp-database",
    );
  });

  it("fails open, with a warning, when the range API is down", async () => {
    const down = service({
      ...NO_VERIFICATION,
      AUTH_PASSWORD_HIBP_ENABLED: "true",
      AUTH_PASSWORD_HIBP_URL: "https://hibp.test/down",
    });
    expect(
      (await down.post("/signup/email-password", { email: uniqueEmail(), password: "password123" })).status,
    ).toBe(200);
  });
});

describe("AUTH_CONCEAL_ERRORS", () => {
  it("answers account-state errors as 400 invalid-request, in JSON and in redirects", async () => {
    const conceal = service({ ...NO_VERIFICATION, AUTH_CONCEAL_ERRORS: "true" });
    await expectError(
      await conceal.post("/signin/email-password", { email: uniqueEmail(), password: PASSWORD }),
      400,
      "invalid-request",
    );
    const email = uniqueEmail();
    await signUp(conceal, email);
    await expectError(
      await conceal.post("/signup/email-password", { email, password: PASSWORD }),
      400,
      "invalid-request",
    );
    const redirect = await conceal.request(
      "GET",
      `/verify?ticket=verifyEmail:${crypto.randomUUID()}&redirectTo=http://localhost:3000`,
    );
    expect(new URL(redirect.headers.get("location")!).searchParams.get("error")).toBe("invalid-request");
    // Other codes are unchanged.
    await expectError(
      await conceal.post("/signup/email-password", { email: uniqueEmail(), password: "short" }),
      400,
      "password-too-short",
    );
  });
});

describe("AUTH_GRAVATAR_*", () => {
  it("is off by default and sets a SHA-256 Gravatar URL when on", async () => {
    expect((await signUp(service(NO_VERIFICATION))).user.avatarUrl).toBe("");
    const email = uniqueEmail();
    const gravatar = service({
      ...NO_VERIFICATION,
      AUTH_GRAVATAR_ENABLED: "true",
      AUTH_GRAVATAR_DEFAULT: "identicon",
      AUTH_GRAVATAR_RATING: "pg",
    });
    const { user } = await signUp(gravatar, email);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(email));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(user.avatarUrl).toBe(`https://www.gravatar.com/avatar/${hex}?d=identicon&r=pg`);
  });
});

describe("AUTH_EMAIL_TEMPLATES", () => {
  it("overrides a built-in template per locale, other templates and locales keep the catalog", async () => {
    const overrides = JSON.stringify({
      en: {
        "email-verify": {
          subject: "Welcome to Acme, ${displayName}",
          text: "Click ${link}",
          html: "<a href='${link}'>go</a>",
        },
      },
    });
    const custom = service({ AUTH_EMAIL_TEMPLATES: overrides, AUTH_LOCALE_ALLOWED_LOCALES: "en,de" });
    const email = uniqueEmail();
    await custom.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { displayName: "Ada" },
    });
    const [mail] = await mailbox(custom, email);
    expect(mail!.subject).toBe("Welcome to Acme, Ada");
    expect(mail!.text).toMatch(/^Click http:\/\/localhost:8787\/auth\/v1\/verify\?ticket=/);
    const german = uniqueEmail();
    await custom.post("/signup/email-password", {
      email: german,
      password: PASSWORD,
      options: { locale: "de" },
    });
    expect((await mailbox(custom, german))[0]!.subject).toBe("Bestätigen Sie Ihre E-Mail-Adresse");
  });

  it("a malformed override is a configuration error (500 without detail)", async () => {
    const broken = service({ AUTH_EMAIL_TEMPLATES: "{not json" });
    const response = await broken.post("/signup/email-password", {
      email: uniqueEmail(),
      password: PASSWORD,
    });
    await expectError(response, 500, "internal-server-error");
  });
});
