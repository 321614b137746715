// The built-in page when a sign-in is locked (contract §13). Threat: credential stuffing through the page instead of
// the API (the page signs in through the API's own sign-in, so the same per-account lockout counts its failures); and
// a person who is told only "too many attempts, N seconds" with no way out, where the mail holds the unlock link.
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import { Browser, ORIGIN } from "./page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "./support";

const svc = provider();

describe("the page of a locked sign-in", () => {
  it("after ten wrong passwords the right one is refused on the page too, in minutes and the reader's language", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const started = await authorize(svc, client);
    const requestId = await requestIdOf(started);
    await browser.get(location(started).toString());
    const attempt = (password: string) =>
      browser.post(
        "/oauth2/interaction/sign-in",
        { request_id: requestId, email: user.email, password },
        { ...ORIGIN, "accept-language": "de" },
      );
    for (let i = 0; i < 10; i++) expect((await attempt(`wrong password ${i}`)).status).toBe(401);
    const locked = await attempt(PASSWORD);
    expect(locked.status).toBe(429);
    const page = await locked.text();
    expect(page).toContain('lang="de"');
    expect(page).toContain("für 15 Minuten gesperrt");
    expect(browser.signedIn).toBe(false);
  }, 30_000);
});
