// The Cloudflare Email Service transport, through Miniflare's emulation of the send_email binding (which validates
// the message and the allowed senders as the platform does). A spy in front of it records what the Worker sent.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError, follow, PASSWORD, PREFIX, service, uniqueEmail } from "../helpers";

type Sent = Parameters<SendEmail["send"]>[0];

function spiedBinding(target: SendEmail = env.CF_EMAIL) {
  const sent: Sent[] = [];
  const binding = {
    send(message: Sent) {
      sent.push(message);
      return target.send(message);
    },
  } as SendEmail;
  return { binding, sent };
}

const viaBinding = (binding: SendEmail, sender = "Edge Auth <noreply@example.com>") =>
  service({ AUTH_DEV_MAILBOX: "false", EMAIL: binding, AUTH_SMTP_SENDER: sender });

describe("Cloudflare Email Service transport", () => {
  it("sends the verification mail through the EMAIL binding, and its link verifies the email", async () => {
    const { binding, sent } = spiedBinding();
    const svc = viaBinding(binding);
    const email = uniqueEmail("cf");
    expect(await (await svc.post("/signup/email-password", { email, password: PASSWORD })).json()).toEqual({
      session: null,
    });
    expect(sent).toHaveLength(1);
    const message = sent[0] as Extract<Sent, { subject: string }>;
    expect(message).toMatchObject({
      from: { email: "noreply@example.com", name: "Edge Auth" },
      to: email,
      subject: "Verify your email",
    });
    expect(message.html).toContain("<a href=");
    const link = new URL(/(http\S+\/verify\?\S+)/.exec(message.text!)![1]!);
    const query = await follow(svc, `${link.pathname.replace(PREFIX, "")}${link.search}`);
    expect(query.get("type")).toBe("emailVerify");
  });

  it("a sender the binding does not allow is a 500, not a silent success", async () => {
    // The platform's refusal, as Miniflare's emulation words it (which would also log it as an uncaught rejection).
    const refusing = {
      send: () => Promise.reject(new Error("email from someone@elsewhere.example not allowed")),
    } as unknown as SendEmail;
    const { binding, sent } = spiedBinding(refusing);
    const svc = viaBinding(binding, "someone@elsewhere.example");
    await expectError(
      await svc.post("/signup/email-password", { email: uniqueEmail(), password: PASSWORD }),
      500,
      "internal-server-error",
    );
    expect(sent).toHaveLength(1);
  });

  it("the development mailbox wins over the binding, so local runs never send real mail", async () => {
    const { binding, sent } = spiedBinding();
    const svc = service({ EMAIL: binding, AUTH_SMTP_SENDER: "noreply@example.com" });
    await svc.post("/signup/email-password", { email: uniqueEmail(), password: PASSWORD });
    expect(sent).toHaveLength(0);
  });
});
