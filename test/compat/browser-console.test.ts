// The admin console and the API reference in a real browser (Debian's Chromium, playwright-core): an operator signs
// in with the admin secret, searches, opens a user, disables them and revokes; no CSP violation on the way.
// CONSOLE_SCREENSHOTS=<dir> keeps screenshots of each step for a person to look at.
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, inject, it } from "vitest";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, PASSWORD, uniqueEmail } from "./client";

const screenshots = process.env.CONSOLE_SCREENSHOTS;
const runs = canRun(CHROMIUM);
const ADMIN = { "x-hasura-admin-secret": inject("adminSecret"), "content-type": "application/json" };

async function shoot(page: Page, name: string) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

async function createUser(email: string, displayName: string): Promise<string> {
  const response = await fetch(`${authUrl}/admin/users`, {
    method: "POST",
    headers: ADMIN,
    body: JSON.stringify({ email, password: PASSWORD, displayName, emailVerified: true }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe.skipIf(!runs)("the admin console in Chromium", () => {
  // One Chromium for the file, started by its first test (a launch is seconds on a busy machine); each test opens
  // contexts of its own in it, as separate as separate browsers are for cookies and storage.
  let chromiumStarted: Promise<Browser> | undefined;
  const chromiumOfThisFile = () => {
    chromiumStarted ??= launch(CHROMIUM);
    return chromiumStarted;
  };
  afterAll(async () => {
    await (await chromiumStarted)?.close();
  });

  it("signs in with the admin secret, finds a user, disables them and revokes their session", async () => {
    const tag = `console${crypto.randomUUID().slice(0, 6)}`;
    const email = uniqueEmail(tag);
    await createUser(uniqueEmail(tag), "Grace Hopper");
    const id = await createUser(email, "Ada Lovelace");
    const signIn = await fetch(`${authUrl}/signin/email-password`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Firefox on a laptop" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const { session } = (await signIn.json()) as { session: { refreshToken: string } };

    const browser = await chromiumOfThisFile();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
      page.setDefaultTimeout(15_000);
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${authUrl}/admin/console`);
      await shoot(page, "1-sign-in");
      await page.fill("#secret", "not the secret");
      await page.click("button[type=submit]");
      await expect.poll(() => page.textContent("[role=alert]")).toContain("not the admin secret");
      await page.fill("#secret", inject("adminSecret"));
      await page.click("button[type=submit]");
      // The console lands on its Overview (issue 34); the users list is one click away.
      await page.waitForSelector("h1:has-text('Overview')");
      await page.click("header a:has-text('Users')");
      await page.waitForSelector("h1:has-text('Users')");

      await page.fill("input[name=search]", tag);
      await page.click("form.filters button:has-text('Show')");
      await page.waitForSelector(`a:has-text('${email}')`);
      expect(await page.locator("tbody tr").count()).toBe(2);
      await shoot(page, "2-users");

      await page.click(`a:has-text('${email}')`);
      await page.waitForSelector("h2:has-text('Sessions (1)')");
      expect(await page.textContent("body")).toContain("Firefox on a laptop");
      await shoot(page, "3-user");
      await page.click("button:has-text('Disable')");
      await page.waitForSelector("[role=status]");
      expect(await page.textContent("[role=status]")).toContain("every session and OAuth2 grant has ended");
      expect(await page.textContent("h1")).toContain("disabled");
      await shoot(page, "4-disabled");
      const refresh = await fetch(`${authUrl}/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refreshToken: session.refreshToken }),
      });
      expect(refresh.status).toBe(401);

      await page.click("header a:has-text('Signing keys')");
      await page.waitForSelector("h1:has-text('Signing keys')");
      await shoot(page, "5-keys");
      await page.click("header a:has-text('Audit log')");
      await page.waitForSelector("h1:has-text('Audit log')");
      expect(await page.textContent("body")).toContain("admin.user.disable");
      await shoot(page, "6-audit");
      await page.click("header a:has-text('OAuth2 clients')");
      await page.waitForSelector("h1:has-text('OAuth2 clients')");

      await page.click("button:has-text('Sign out')");
      await page.waitForSelector("#secret");
      await page.goto(`${authUrl}/admin/console/users/${id}`);
      await page.waitForSelector("#secret");

      await page.goto(`${authUrl}/reference`);
      await page.waitForSelector("h1:has-text('Auth API')");
      expect(await page.locator("details").count()).toBeGreaterThan(80);
      await page.click("summary:has-text('/signup/email-password')");
      await shoot(page, "7-reference");
      expect(violations).toEqual([]);
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
    }
  }, 60_000);

  // "Try it" sends real requests from the page (its own script, connect-src 'self'): a search narrows the list, a
  // sign-in with an edited example body answers a session, and the token typed into the page reads the user.
  it("the API reference: search narrows the operations, try-it signs in and reads the user with the token", async () => {
    const email = uniqueEmail("reference");
    await createUser(email, "Katherine Johnson");
    const browser = await chromiumOfThisFile();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
      page.setDefaultTimeout(15_000);
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${authUrl}/reference`);
      await page.fill("#search", "signin email-password");
      await expect.poll(() => page.locator("details.operation:visible").count()).toBe(1);
      const signIn = page.locator("#postSigninEmailPassword");
      await signIn.locator("> summary").click();
      await signIn
        .locator("textarea[name=body]")
        .fill(JSON.stringify({ email, password: PASSWORD }, null, 2));
      await signIn.locator("form.try button").click();
      await expect.poll(() => signIn.locator("output").getAttribute("data-status")).toBe("200");
      const answer = (await signIn.locator("output").textContent())!;
      const accessToken = /"accessToken": "([^"]+)"/.exec(answer)?.[1];
      expect(accessToken).toBeDefined();
      await shoot(page, "8-reference-try-it");

      await page.fill("#authorization", accessToken!);
      await page.fill("#search", "get /user");
      const getUser = page.locator("#getUser");
      await getUser.locator("> summary").click();
      await getUser.locator("form.try button").click();
      await expect.poll(() => getUser.locator("output").getAttribute("data-status")).toBe("200");
      expect(await getUser.locator("output").textContent()).toContain(email);
      expect(violations).toEqual([]);
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
    }
  }, 60_000);

  // Webhooks (contract move-in §5.2) in the browser: an endpoint added through the form (its secret shown once) at a
  // receiver on loopback (AUTH_OUTBOUND_ALLOW_LOCAL, as `npm start` has it) that verifies every signature; wrangler
  // dev's own queues deliver a new user's events, the first answered 500, which the deliveries table shows with a
  // redeliver button; the dead letters' page; axe at 1280 and 390 px. CONSOLE_SCREENSHOTS keeps webhooks-console.png.
  it("webhooks: adds an endpoint, shows its deliveries (one failed attempt), redelivers; dead letters; axe", async () => {
    const posts: { id: string; type: string }[] = [];
    let secret = "";
    let answered = 0;
    let endpointId = "";
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        try {
          const event = new Webhook(secret).verify(
            Buffer.concat(chunks).toString("utf8"),
            request.headers as Record<string, string>,
          ) as { id: string; type: string };
          posts.push(event);
        } catch {
          response.writeHead(401).end("bad signature");
          return;
        }
        response.writeHead(answered++ === 0 ? 500 : 204).end(answered === 1 ? "receiver warming up" : "");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/auth`;
    const browser = await chromiumOfThisFile();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      page.setDefaultTimeout(15_000);
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${authUrl}/admin/console`);
      await page.fill("#secret", inject("adminSecret"));
      await page.click("button[type=submit]");
      await page.waitForSelector("h1:has-text('Overview')");
      await page.click("header a:has-text('Webhooks')");
      await page.waitForSelector("h1:has-text('Webhooks')");
      await page.fill("form[action$='/webhooks/create'] input[name=url]", hookUrl);
      await page.fill("form[action$='/webhooks/create'] input[name=description]", "CRM sync");
      await page.check("input[name=events][value='user.created']");
      await page.check("input[name=events][value='user.updated']");
      await page.click("button:has-text('Add endpoint')");
      await page.waitForSelector("code.secret");
      secret = (await page.textContent("code.secret"))!;
      expect(secret).toMatch(/^whsec_/);
      // The page answers the form's post: its own address is the endpoint's, under the edit form's action.
      const editAction = (await page.getAttribute("form[action$='/edit']", "action"))!;
      const endpointPage = new URL(editAction.replace(/\/edit$/, ""), page.url()).toString();
      endpointId = endpointPage.split("/").pop()!;

      const id = await createUser(uniqueEmail("webhook-console"), "Radia Perlman");
      await fetch(`${authUrl}/admin/users/${id}`, {
        method: "PATCH",
        headers: ADMIN,
        body: JSON.stringify({ displayName: "Radia J. Perlman" }),
      });
      // Both events are posted (wrangler dev's queues); the first answer was a 500, so one waits for its retry.
      await expect.poll(() => posts.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
      const mainText = async () => {
        await page.goto(endpointPage);
        return page.textContent("main");
      };
      // Until its retry (10 s later on this server), the first delivery shows the 500 and what the receiver said.
      await expect.poll(mainText, { timeout: 8_000 }).toContain("receiver warming up");
      expect(await page.textContent("body")).not.toContain(secret);
      expect(await page.locator("main .badge:has-text('delivered')").count()).toBeGreaterThanOrEqual(1);
      await shoot(page, "webhooks-console");
      await page.locator("button:has-text('Redeliver'), button:has-text('Send again')").first().click();
      await page.waitForSelector("text=The delivery is queued again.");
      await page.click("header a:has-text('Webhooks')");
      await page.waitForSelector("h2:has-text('Dead letters')");
      await shoot(page, "webhooks-list");
      await page.goto(`${authUrl}/admin/console/dead-letters`);
      await page.waitForSelector("h1:has-text('Dead letters')");
      await shoot(page, "webhooks-dead-letters");
      expect(violations).toEqual([]);

      for (const width of [1280, 390]) {
        const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
        const checked = await context.newPage();
        checked.setDefaultTimeout(15_000);
        await checked.goto(`${authUrl}/admin/console`);
        await checked.fill("#secret", inject("adminSecret"));
        await checked.click("button[type=submit]");
        await checked.waitForSelector("h1:has-text('Overview')");
        for (const [path, name] of [
          ["/admin/console/webhooks", "console-webhooks"],
          [new URL(endpointPage).pathname.replace("/auth/v1", ""), "console-webhook"],
          ["/admin/console/dead-letters", "console-dead-letters"],
        ]) {
          await checked.goto(`${authUrl}${path}`);
          if (width === 390) await shoot(checked, `${name}-390`);
          await expectAccessible(checked, `${name} at ${width}px`);
          if (width === 390) await expectNoSidewaysScroll(checked, name!);
        }
        await context.close();
      }
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
      receiver.close();
      // The endpoint goes with its receiver: left, it took every later file's new users for the rest of the run,
      // each delivery refused at a closed port and retried by the shared server's queue until its dead letter.
      if (endpointId) {
        const removed = await fetch(`${authUrl}/admin/webhooks/${endpointId}`, {
          method: "DELETE",
          headers: ADMIN,
        });
        expect(removed.status).toBe(204);
      }
    }
  }, 90_000);

  it("shows an organization's pages and permissions without accessibility violations or sideways scroll, at 1280 and 390 px", async () => {
    const owner = await createUser(uniqueEmail("org-console"), "Ada Lovelace");
    const created = await fetch(`${authUrl}/admin/orgs`, {
      method: "POST",
      headers: ADMIN,
      body: JSON.stringify({ name: "Acme Engineering", ownerUserId: owner }),
    });
    expect(created.status).toBe(201);
    const org = (await created.json()) as { id: string };
    await fetch(`${authUrl}/admin/orgs/${org.id}/invitations`, {
      method: "POST",
      headers: ADMIN,
      body: JSON.stringify({ email: uniqueEmail("org-invited"), role: "member" }),
    });
    const browser = await chromiumOfThisFile();
    try {
      for (const width of [1280, 390]) {
        const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
        const checked = await context.newPage();
        checked.setDefaultTimeout(15_000);
        await checked.goto(`${authUrl}/admin/console`);
        await checked.fill("#secret", inject("adminSecret"));
        await checked.click("button[type=submit]");
        await checked.waitForSelector("h1:has-text('Overview')");
        await checked.click("header a:has-text('Organizations')");
        await checked.waitForSelector("h1:has-text('Organizations')");
        await checked.goto(`${authUrl}/admin/console/orgs/${org.id}`);
        // The SCIM token, shown once on the page that answers its creation: the longest unbreakable text there.
        await checked.fill("form[aria-label='Create a SCIM token'] input[name=name]", "Entra ID");
        await checked.click("form[aria-label='Create a SCIM token'] button");
        await checked.waitForSelector("code.secret");
        await shoot(checked, `console-org-${width}`);
        await expectAccessible(checked, `console-org at ${width}px`);
        if (width === 390) await expectNoSidewaysScroll(checked, "console-org");
        await checked.goto(`${authUrl}/admin/console/orgs`);
        await expectAccessible(checked, `console-orgs at ${width}px`);
        if (width === 390) await expectNoSidewaysScroll(checked, "console-orgs");
        // Permissions (issue 45): the schema, the policy set, the try form and the relationships.
        await checked.goto(`${authUrl}/admin/console/permissions`);
        await checked.waitForSelector("h1:has-text('Permissions')");
        await expectAccessible(checked, `console-permissions at ${width}px`);
        if (width === 390) await expectNoSidewaysScroll(checked, "console-permissions");
        await context.close();
      }
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
    }
  }, 60_000);
});
