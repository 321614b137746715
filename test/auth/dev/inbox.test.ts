import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { service, uniqueEmail } from "../../helpers";

const svc = service();

describe("the development inbox (HTML)", () => {
  it("lists mails newest first and opens one with its links clickable, under a strict CSP", async () => {
    const email = uniqueEmail("inbox");
    expect(
      (await svc.post("/signup/email-password", { email, password: "correct horse battery" })).status,
    ).toBe(200);
    const inbox = await svc.get(`/dev/inbox?to=${encodeURIComponent(email)}`);
    expect(inbox.status).toBe(200);
    expect(inbox.headers.get("content-type")).toMatch(/text\/html/);
    expect(inbox.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    const list = await inbox.text();
    const [, id] = /href="inbox\/(\d+)"/.exec(list) ?? [];
    expect(id).toBeTruthy();

    const mail = await svc.get(`/dev/inbox/${id}`);
    expect(mail.status).toBe(200);
    const body = await mail.text();
    expect(body).toMatch(/<a href="http:\/\/[^"]+\/verify\?[^"]*ticket=verifyEmail/);
  });

  // Threat: mail text is influenced by users (names, addresses); the inbox must not run it.
  it("escapes what a mail says, and 404s an unknown mail", async () => {
    const row = await env.DB.prepare(
      "INSERT INTO dev_mailbox (\"to\", subject, text, html, created_at) VALUES (?, ?, ?, '', ?) RETURNING id",
    )
      .bind(
        "x@example.com",
        "<img src=x onerror=alert(1)>",
        "hi <script>alert(1)</script> https://ok.example/a",
        Date.now(),
      )
      .first<{ id: number }>();
    const body = await (await svc.get(`/dev/inbox/${row!.id}`)).text();
    expect(body).not.toContain("<script>alert(1)");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain("&lt;script&gt;");
    expect(body).toContain('<a href="https://ok.example/a">');
    expect((await svc.get("/dev/inbox/999999999")).status).toBe(404);
  });
});
