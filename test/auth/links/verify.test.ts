import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError, PASSWORD, service, uniqueEmail, verifyPath } from "../../helpers";
import { eachStatementFailingOnce } from "../../support/faults";
import { allInShards, routedD1 } from "../../support/shards";

const svc = service({ AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com/welcome" });

interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  createdAt: string;
}

async function mailbox(to: string, s = svc): Promise<Mail[]> {
  const response = await s.get(`/dev/mailbox?to=${encodeURIComponent(to)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Mail[];
}

function verificationLink(mail: Mail): URL {
  const match = /(http\S+\/verify\?\S+)/.exec(mail.text);
  if (!match) throw new Error("no link in mail");
  return new URL(match[1]!);
}

describe("email verification (on by default)", () => {
  it("sign-up answers session null and mails a verifyEmail link", async () => {
    const email = uniqueEmail();
    const response = await svc.post("/signup/email-password", { email, password: PASSWORD });
    expect(await response.json()).toEqual({ session: null });
    const [mail, ...rest] = await mailbox(email);
    expect(rest).toHaveLength(0);
    expect(mail).toMatchObject({ to: email, subject: "Verify your email", createdAt: expect.any(String) });
    const link = verificationLink(mail!);
    expect(`${link.origin}${link.pathname}`).toBe("http://localhost:8787/auth/v1/verify");
    expect(link.searchParams.get("ticket")).toMatch(/^verifyEmail:[0-9a-f-]{36}$/);
    expect(link.searchParams.get("type")).toBe("emailVerify");
    expect(link.searchParams.get("redirectTo")).toBe("http://localhost:3000");
    expect(mail!.html).toContain(link.toString().replace(/&/g, "&amp;"));
  });

  it("following the link verifies the email, starts a session and redirects with the refresh token", async () => {
    const email = uniqueEmail();
    const redirectTo = "https://app.example.com/welcome?from=mail";
    await svc.post("/signup/email-password", { email, password: PASSWORD, options: { redirectTo } });
    await expectError(
      await svc.post("/signin/email-password", { email, password: PASSWORD }),
      401,
      "unverified-user",
    );

    const [mail] = await mailbox(email);
    const link = verificationLink(mail!);
    expect(link.searchParams.get("redirectTo")).toBe(redirectTo);
    const response = await svc.request("GET", `${link.pathname}${link.search}`.replace("/auth/v1", ""));
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe("https://app.example.com/welcome");
    expect(location.searchParams.get("from")).toBe("mail");
    expect(location.searchParams.get("type")).toBe("emailVerify");
    const refreshToken = location.searchParams.get("refreshToken")!;

    const session = (await (await svc.post("/token", { refreshToken })).json()) as {
      user: { emailVerified: boolean };
    };
    expect(session.user.emailVerified).toBe(true);
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);

    // Single use: the same link again is an invalid ticket.
    const again = await svc.request("GET", `${link.pathname}${link.search}`.replace("/auth/v1", ""));
    const error = new URL(again.headers.get("location")!);
    expect(error.searchParams.get("error")).toBe("invalid-ticket");
    expect(error.searchParams.get("errorDescription")).toBeTruthy();
  });

  it("a ticket used twice in parallel succeeds once", async () => {
    const email = uniqueEmail();
    await svc.post("/signup/email-password", { email, password: PASSWORD });
    const link = verificationLink((await mailbox(email))[0]!);
    const path = `${link.pathname}${link.search}`.replace("/auth/v1", "");
    const answers = await Promise.all([1, 2, 3, 4].map(() => svc.request("GET", path)));
    const withToken = answers.filter((r) =>
      new URL(r.headers.get("location")!).searchParams.has("refreshToken"),
    );
    expect(withToken).toHaveLength(1);
  });

  it("stores tickets hashed, and a newer verification mail replaces the older ticket", async () => {
    const email = uniqueEmail();
    await svc.post("/signup/email-password", { email, password: PASSWORD });
    const ticket = verificationLink((await mailbox(email))[0]!).searchParams.get("ticket")!;
    const rows = await allInShards<{ ticket_hash: string }>(
      "SELECT ticket_hash FROM tickets WHERE type = 'verifyEmail'",
    );
    expect(rows.some((r) => r.ticket_hash.includes(ticket.split(":")[1]!))).toBe(false);
  });

  it("redirects with error=invalid-ticket for unknown, malformed and expired tickets", async () => {
    for (const ticket of [`verifyEmail:${crypto.randomUUID()}`, "garbage", ""]) {
      const response = await svc.request(
        "GET",
        `/verify?ticket=${encodeURIComponent(ticket)}&redirectTo=http://localhost:3000`,
      );
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get("location")!);
      expect(location.origin).toBe("http://localhost:3000");
      expect(location.searchParams.get("error")).toBe("invalid-ticket");
    }
    const email = uniqueEmail();
    await svc.post("/signup/email-password", { email, password: PASSWORD });
    const link = verificationLink((await mailbox(email))[0]!);
    const ticketId = link.searchParams.get("ticket")!.split(":")[1]!;
    await routedD1(ticketId).prepare("UPDATE tickets SET expires_at = 0 WHERE type = 'verifyEmail'").run();
    const expired = await svc.request("GET", `${link.pathname}${link.search}`.replace("/auth/v1", ""));
    expect(new URL(expired.headers.get("location")!).searchParams.get("error")).toBe("invalid-ticket");
  });

  it("redirects to the client URL with error=redirectTo-not-allowed for a foreign redirectTo", async () => {
    const response = await svc.request(
      "GET",
      `/verify?ticket=verifyEmail:x&redirectTo=${encodeURIComponent("https://evil.example")}`,
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location")!);
    expect(location.origin).toBe("http://localhost:3000");
    expect(location.searchParams.get("error")).toBe("redirectTo-not-allowed");
  });
});

describe("development mailbox", () => {
  it("lists messages newest first and is absent unless AUTH_DEV_MAILBOX is on", async () => {
    const email = uniqueEmail();
    await svc.post("/signup/email-password", { email, password: PASSWORD });
    await env.DB.prepare(
      "INSERT INTO dev_mailbox (\"to\", subject, text, html, created_at) VALUES (?, 'later', '', '', ?)",
    )
      .bind(email, Date.now() + 1)
      .run();
    expect((await mailbox(email)).map((m) => m.subject)).toEqual(["later", "Verify your email"]);
    await expectError(await svc.get("/dev/mailbox"), 400, "invalid-request");
    const production = service({ AUTH_DEV_MAILBOX: "false" });
    await expectError(await production.get(`/dev/mailbox?to=${email}`), 404, "route-not-found");
  });

  it("without a mail transport, a sign-up that must send mail fails with 500, not silently, and can be retried", async () => {
    const production = service({ AUTH_DEV_MAILBOX: "false" });
    const email = uniqueEmail();
    const response = await production.post("/signup/email-password", { email, password: PASSWORD });
    const body = await expectError(response, 500, "internal-server-error");
    expect(body.message).toBe("internal server error");
    expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
  });
});

describe("a mailed link with D1 failing once at each statement of GET /verify", () => {
  // Threat (before): a fault after the ticket was taken (the user's read, the link's effect, the session's batch)
  // answered with the link spent: the retry the fault asks for was refused (invalid-ticket), and the user had to ask
  // for another. Threat (after): D1 ran the ticket's take (one DELETE … RETURNING) but its answer was lost: the 503
  // could not put back a row it never saw. Each statement of GET /verify fails once, before it ran or after (its answer
  // lost); the ticket's own take among them.
  it.each(["before", "after"] as const)(
    "each step failing %s it ran: a session, or a fault whose retry of the same link signs in; the link spent and gone afterwards",
    async (when) => {
      const vars = {
        AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
        AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com/welcome",
      };
      const asking = service(vars);
      const newLink = async () => {
        const email = uniqueEmail(`verify-${when}`);
        const asked = await asking.post("/signin/passwordless/email", {
          email,
          options: { redirectTo: "https://app.example.com/welcome" },
        });
        expect(asked.status).toBe(200);
        return { email, path: verifyPath((await mailbox(email, asking))[0]!) };
      };
      /** The user's tickets left, under any key (a claim's `taken:…` included). */
      const ticketsOf = (email: string) =>
        allInShards("SELECT t.type FROM tickets t JOIN users u ON u.id = t.user_id WHERE u.email = ?", email);
      const outcome = async (answer: Response) => {
        if (answer.status !== 302) return { status: answer.status, query: new URLSearchParams() };
        return { status: 302, query: new URL(answer.headers.get("location")!).searchParams };
      };
      let retried = 0;
      const steps = await eachStatementFailingOnce(
        env,
        async (bindings) => {
          const first = await outcome(
            await service({ ...vars, ...bindings }).request("GET", (await newLink()).path),
          );
          expect(first.query.get("refreshToken"), `${first.status} ${first.query}`).toBeTruthy();
        },
        async (bindings, context) => {
          const failing = service({ ...vars, ...bindings });
          const { email, path } = await newLink();
          const answer = await outcome(await failing.request("GET", path));
          if (!answer.query.get("refreshToken")) {
            // The fault: the handler's 503, or the redirect naming it (a browser's link has nowhere else to go).
            expect(
              answer.status === 503 || answer.query.get("error") === "service-unavailable",
              `${context}: ${answer.status} ${answer.query}`,
            ).toBe(true);
            retried++;
            const retry = await outcome(await failing.request("GET", path));
            expect(
              retry.query.get("refreshToken"),
              `${context}: ${retry.status} ${retry.query}`,
            ).toBeTruthy();
          }
          // Spent now, by the one request that signed in.
          const again = await outcome(await asking.request("GET", path));
          expect(again.query.get("error"), context).toBe("invalid-ticket");
          // And gone: the claimed row is deleted after the answer, not left under its claim's key.
          expect(await ticketsOf(email), context).toEqual([]);
        },
        { when },
      );
      expect(steps.filter((sql) => /^(update|delete from) "tickets"/.test(sql)).length).toBeGreaterThan(0);
      expect(retried).toBeGreaterThan(1);
    },
    60_000,
  );
});
