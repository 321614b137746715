// The SMTP transport against a real SMTP server on loopback (test/fakes/smtp-sink.ts): what is checked is what
// arrived on the wire, and the mailed link is then followed to the end.
import { describe, expect, inject, it } from "vitest";
import type { ReceivedMail } from "../fakes/smtp-sink";
import { expectError, follow, PASSWORD, PREFIX, service, signUp, uniqueEmail } from "../helpers";

const SMTP = {
  AUTH_DEV_MAILBOX: "false",
  AUTH_SMTP_HOST: "127.0.0.1",
  AUTH_SMTP_PORT: String(inject("smtpPort")),
  AUTH_SMTP_USER: "mailer",
  AUTH_SMTP_PASS: "smtp secret",
  AUTH_SMTP_SENDER: "Edge Auth <noreply@example.com>",
  AUTH_LOCALE_ALLOWED_LOCALES: "en,fr",
};

async function received(to: string): Promise<ReceivedMail[]> {
  const response = await fetch(`${inject("smtpInboxUrl")}?to=${encodeURIComponent(to)}`);
  return (await response.json()) as ReceivedMail[];
}

/** The `/verify` link of a received mail, relative to the auth prefix. */
function linkOf(mail: ReceivedMail): string {
  const url = new URL(/(http\S+\/verify\?\S+)/.exec(mail.text)![1]!);
  return `${url.pathname.replace(PREFIX, "")}${url.search}`;
}

describe("SMTP transport", () => {
  it("delivers the verification mail with AUTH, a text and an HTML part, and its link verifies the email", async () => {
    const svc = service(SMTP);
    const email = uniqueEmail("smtp");
    const response = await svc.post("/signup/email-password", { email, password: PASSWORD });
    expect(await response.json()).toEqual({ session: null });

    const [mail, ...others] = await received(email);
    expect(others).toHaveLength(0);
    expect(mail).toMatchObject({
      envelope: { from: "noreply@example.com", to: [email] },
      authUser: "mailer",
      from: "Edge Auth <noreply@example.com>",
      to: [email],
      subject: "Verify your email",
    });
    expect(mail!.raw).toMatch(/^Content-Type: multipart\/alternative/m);
    expect(mail!.text).toContain(`Hello ${email}`);
    const link = linkOf(mail!);
    expect(mail!.html).toContain(`href="http://localhost:8787${PREFIX}${link.replace(/&/g, "&amp;")}"`);

    const query = await follow(svc, link);
    expect(query.get("type")).toBe("emailVerify");
    const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(signIn.status).toBe(200);
  });

  it("encodes non-ASCII subjects and bodies so they arrive intact", async () => {
    const email = uniqueEmail("smtp-fr");
    const svc = service(SMTP);
    await svc.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { locale: "fr", displayName: "Zoë Müller" },
    });
    const [mail] = await received(email);
    expect(mail!.subject).toBe("Vérifiez votre adresse e-mail");
    expect(mail!.text).toContain("Bonjour Zoë Müller");
    expect(mail!.html).toContain("vérifiez votre adresse e-mail");
  });

  it.each(["PLAIN", "LOGIN"])("authenticates with %s", async (method) => {
    const svc = service({ ...SMTP, AUTH_SMTP_AUTH_METHOD: method });
    const email = uniqueEmail("smtp-auth");
    await signUp(service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" }), email);
    expect(await (await svc.post("/user/password/reset", { email })).json()).toBe("OK");
    const [mail] = await received(email);
    expect(mail).toMatchObject({ authUser: "mailer", subject: "Reset your password" });
  });

  it("a refused login is a 500 without detail, and the sign-up can be retried once mail works", async () => {
    const email = uniqueEmail("smtp-badauth");
    const broken = service({ ...SMTP, AUTH_SMTP_PASS: "wrong" });
    const body = await expectError(
      await broken.post("/signup/email-password", { email, password: PASSWORD }),
      500,
      "internal-server-error",
    );
    expect(body.message).toBe("internal server error");
    expect(await received(email)).toHaveLength(0);
    expect((await service(SMTP).post("/signup/email-password", { email, password: PASSWORD })).status).toBe(
      200,
    );
    expect(await received(email)).toHaveLength(1);
  });

  it("a recipient the relay refuses is a 500, not a silent success", async () => {
    const email = uniqueEmail("bounce");
    await expectError(
      await service(SMTP).post("/signup/email-password", { email, password: PASSWORD }),
      500,
      "internal-server-error",
    );
  });

  // Threat: enumeration by timing. Reset and resend used to await the relay for known addresses only.
  it("reset and resend answer before any mail is sent: known and unknown addresses alike, relay down or not", async () => {
    const down = service({ ...SMTP, AUTH_SMTP_PORT: "1" });
    const known = uniqueEmail("known");
    await signUp(service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" }), known);
    for (const path of ["/user/password/reset", "/user/email/send-verification-email"]) {
      for (const email of [known, uniqueEmail("unknown")]) {
        const response = await down.post(path, { email });
        expect(response.status, `${path} ${email}`).toBe(200);
        expect(await response.json()).toBe("OK");
      }
    }
    // With the relay up, the known address gets its mail (sent after the answer).
    await service(SMTP).post("/user/password/reset", { email: known });
    expect((await received(known)).map((m) => m.subject)).toContain("Reset your password");
  });

  // Threat: a relay that is down for a moment answered as a bug (500, no Retry-After), so clients give up on a
  // sign-up a retry would have completed.
  it("a relay that refuses the connection is a 503 with Retry-After; the sign-up is retried once mail works", async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused.
    const down = service({ ...SMTP, AUTH_SMTP_PORT: "1" });
    const email = uniqueEmail("smtp-down");
    const answer = await down.post("/signup/email-password", { email, password: PASSWORD });
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    await expectError(answer, 503, "service-unavailable");
    // The sign-up was undone with its mail: the retry is the same request, not `email-already-in-use`.
    expect((await service(SMTP).post("/signup/email-password", { email, password: PASSWORD })).status).toBe(
      200,
    );
    expect(await received(email)).toHaveLength(1);
  });

  // Threat: a relay's "try again later" (SMTP 4yz) answered as a bug, or as a success.
  it("a relay that is busy for now (451) is a 503 with Retry-After", async () => {
    const answer = await service(SMTP).post("/signup/email-password", {
      email: uniqueEmail("busy"),
      password: PASSWORD,
    });
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    await expectError(answer, 503, "service-unavailable");
  });
});
