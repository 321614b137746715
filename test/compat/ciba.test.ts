// OpenID CIBA Core 1.0 (contract operators.md §2) through real clients against `wrangler dev`: openid-client asks
// for a user's approval in poll mode (§7, then §10.1 polling) and in ping mode (§10.2: the ping posted to the client's
// own endpoint with its client_notification_token, then one poll); the MCP SDK runs the example MCP server
// (examples/mcp-server-approval), whose `pay` tool asks by CIBA before it pays; Debian's Chromium approves all three
// as the user would: the mailed link, sign-in, the binding message shown quoted under the client's name, Approve; then
// the account center's "Waiting for you" list. axe (axe.ts) checks the approval page and the account center with its
// waiting list at 1280 and 390 px (threat: an approval a person using a screen reader or a phone cannot read or
// answer, so they approve blind or not at all). Every bad input and rule is in the workers project
// (test/oauth2/ciba.test.ts); this file proves the real clients and browser. The three run at once: the poll
// interval (5 s) is the bulk of the time.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { approvalClient } from "../../examples/mcp-server-approval/src/approval";
import { createPayServer } from "../../examples/mcp-server-approval/src/pay-server";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, PASSWORD, verifiedUser } from "./client";
import { discover, registerClient } from "./relying-party";

const runs = canRun(CHROMIUM);
const CIBA_GRANT = "urn:openid:params:grant-type:ciba";

/** The ping client's own endpoint on loopback: the pings it got, with their headers. */
async function pingReceiver() {
  const pings: { authorization?: string; body: string }[] = [];
  let heard: (() => void) | undefined;
  const first = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const server = createServer((request: IncomingMessage, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      pings.push({ authorization: request.headers.authorization, body });
      response.writeHead(204).end();
      heard?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ciba`, pings, first, server };
}

/** axe and the width check on the page as it is, at 1280 then 390 px (back to 1280 after). */
async function accessibleAtBothWidths(page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await expectAccessible(page, `${name} at ${width} px`);
    await expectNoSidewaysScroll(page, `${name} at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 844 });
}

/** The approval link of the CIBA mail to `email` whose subject names the client (the mails come in any order). */
async function approvalLink(email: string, subject: RegExp): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const response = await fetch(`${authUrl}/dev/mailbox?to=${encodeURIComponent(email)}`);
    const mail = ((await response.json()) as { subject: string; text: string }[]).find((m) =>
      subject.test(m.subject),
    );
    if (mail) return /(http\S+\/oauth2\/ciba\?request=\S+)/.exec(mail.text)![1]!;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no approval mail to ${email}`);
}

describe.skipIf(!runs)("OpenID CIBA with openid-client, the MCP SDK and Chromium", () => {
  it("poll (§10.1), ping (§10.2) and the example's pay tool, each approved on the page", async () => {
    const notificationToken = `compat-${crypto.randomUUID()}`;
    let pollAnswer: ReturnType<typeof oidc.pollBackchannelAuthenticationGrant> | undefined;
    let pingRequest: oidc.BackchannelAuthenticationResponse | undefined;
    let payment: ReturnType<Client["callTool"]> | undefined;
    // Chromium starts while the person and the clients are made; the person signs in to their account center first,
    // so the approvals below fit in one poll interval.
    const launched = launch(CHROMIUM);
    const person = await verifiedUser("ciba");
    const sub = decodeJwt(person.accessToken).sub;
    const receiver = await pingReceiver();
    const [pollClient, pingClient, payClient] = await Promise.all([
      registerClient({
        clientName: "Poll Agent",
        redirectUris: [],
        grantTypes: [CIBA_GRANT],
        backchannelTokenDeliveryMode: "poll",
      }),
      registerClient({
        clientName: "Ping Agent",
        redirectUris: [],
        grantTypes: [CIBA_GRANT],
        backchannelTokenDeliveryMode: "ping",
        backchannelClientNotificationEndpoint: receiver.url,
      }),
      registerClient({
        clientName: "Pay Agent",
        redirectUris: [],
        grantTypes: [CIBA_GRANT],
        backchannelTokenDeliveryMode: "poll",
      }),
    ]);
    const [polling, pinged, payConfig] = await Promise.all([
      discover(pollClient, oidc.ClientSecretBasic(pollClient.clientSecret)),
      discover(pingClient, oidc.ClientSecretBasic(pingClient.clientSecret)),
      approvalClient({
        issuer: authUrl,
        clientId: payClient.clientId,
        clientSecret: payClient.clientSecret!,
      }),
    ]);
    expect(polling.serverMetadata().backchannel_authentication_endpoint).toBe(
      `${authUrl}/oauth2/bc-authorize`,
    );

    // The MCP SDK's client and the example server, linked in memory: the tool call waits for the approval.
    const { server, payments } = createPayServer({ client: payConfig, user: person.email });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const mcp = new Client({ name: "compat host", version: "1.0.0" });
    await mcp.connect(clientSide);

    const browser = await launched;
    try {
      // axe is loaded into the page (axe.ts): the page's CSP is bypassed for it, as the other axe checks do.
      const context = await browser.newContext({ viewport: { width: 1280, height: 844 }, bypassCSP: true });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${authUrl}/account`);
      await page.fill("#email", person.email);
      await page.fill("#password", PASSWORD);
      await page.click("button[type=submit]");
      await page.waitForSelector("#waiting");

      // Three requests wait for the person at once.
      const pollRequest = await oidc.initiateBackchannelAuthentication(polling, {
        scope: "openid",
        login_hint: person.email,
        binding_message: "Poll 1",
      });
      pollAnswer = oidc.pollBackchannelAuthenticationGrant(polling, pollRequest);
      pingRequest = await oidc.initiateBackchannelAuthentication(pinged, {
        scope: "openid",
        login_hint: person.email,
        binding_message: "Ping 2",
        client_notification_token: notificationToken,
      });
      payment = mcp.callTool({ name: "pay", arguments: { amount: 120, currency: "EUR", payee: "ACME" } });

      // The poll request's mail: its link, the message under the client's name, Approve.
      await page.goto(await approvalLink(person.email, /Poll Agent/));
      expect(await page.textContent("figure.binding figcaption")).toBe("Message from Poll Agent");
      expect(await page.textContent("figure.binding blockquote")).toBe("“Poll 1”");
      await page.click("button[value=allow]");
      await page.getByRole("heading", { name: "Request approved" }).waitFor();

      // The other two from the account center's list.
      for (const [client, message] of [
        ["Ping Agent", "“Ping 2”"],
        ["Pay Agent", "“Pay 120 EUR to ACME”"],
      ] as const) {
        await approvalLink(person.email, new RegExp(client));
        await page.goto(`${authUrl}/account`);
        const row = page.locator("#waiting tr", { hasText: client });
        expect(await row.textContent()).toContain(message);
        await row.getByRole("link").click();
        expect(await page.textContent("figure.binding blockquote")).toBe(message);
        await page.click("button[value=allow]");
        await page.getByRole("heading", { name: "Request approved" }).waitFor();
      }

      // Accessibility, while openid-client's poll waits out its interval (so it costs the walk no time): a fourth
      // request, left waiting (the three above are decided: the per-user limit of 3 has room), in the account
      // center's list and on its approval page.
      await oidc.initiateBackchannelAuthentication(polling, {
        scope: "openid",
        login_hint: person.email,
        binding_message: "Check 4",
      });
      await page.goto(`${authUrl}/account`);
      const waiting = page.locator("#waiting tr", { hasText: "Check 4" });
      await waiting.waitFor();
      await accessibleAtBothWidths(page, "the account center waiting for you");
      await waiting.getByRole("link").click();
      expect(await page.textContent("figure.binding blockquote")).toBe("“Check 4”");
      await accessibleAtBothWidths(page, "the CIBA approval page");
    } finally {
      await browser.close();
    }

    // Poll mode: openid-client's polling (pending until the click) ends with the person's tokens.
    const tokens = await pollAnswer!;
    expect(tokens.claims()?.sub).toBe(sub);
    // Ping mode: the ping names the request and carries the client's token; then one poll gets the tokens.
    await receiver.first;
    expect(receiver.pings[0]).toEqual({
      authorization: `Bearer ${notificationToken}`,
      body: JSON.stringify({ auth_req_id: pingRequest!.auth_req_id }),
    });
    const pingTokens = await oidc.pollBackchannelAuthenticationGrant(pinged, {
      ...pingRequest!,
      interval: 0,
    });
    expect(pingTokens.claims()?.sub).toBe(sub);
    // The auth_req_id gives tokens once.
    await expect(
      oidc.pollBackchannelAuthenticationGrant(pinged, { ...pingRequest!, interval: 0 }),
    ).rejects.toMatchObject({
      error: "invalid_grant",
    });
    // The MCP tool ran once approved.
    expect(await payment!).toMatchObject({ content: [{ type: "text", text: "Paid 120 EUR to ACME." }] });
    expect(payments).toEqual([{ amount: 120, currency: "EUR", payee: "ACME", approvedBy: sub }]);
    await mcp.close();
    receiver.server.close();
  });
});
