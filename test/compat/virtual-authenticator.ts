import type { BrowserContext, Page } from "playwright-core";

/**
 * A platform authenticator with resident keys and user verification, present and approving at once, attached to
 * the page through the Chrome DevTools Protocol (what the browser WebAuthn tests sign with).
 */
export async function addVirtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}
