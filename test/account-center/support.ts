// Shared by the account-center tests: a browser signed in to the built-in pages (through the OAuth2 login page, the
// same cookie the hosted sign-in sets), the page's forms, and a clock moved past the re-authentication window.
import { expect, vi } from "vitest";
import { PASSWORD, signUp, type TestService, uniqueEmail, type WireSession } from "../helpers";
import { Browser, signIn } from "../oauth2/page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "../oauth2/support";

export const ACCOUNT = "/account";

/** A test of several page steps (a sign-in on the page, then the account center's): more than the default 5 s. */
export const PAGE_STEPS = 30_000;
export const ACCOUNT_URL = "http://localhost:8787/auth/v1/account";

/** The account center is served whatever the provider setting; the OAuth2 page signs the test browsers in. */
export const accountService = (overrides: Record<string, unknown> = {}) => provider(overrides);

/** A new user (through the API) and a browser signed in to the pages as them with their password. */
export async function signedIn(
  svc: TestService,
  options: { email?: string; locale?: string } = {},
): Promise<{ browser: Browser; user: WireSession["user"]; session: WireSession; email: string }> {
  const email = options.email ?? uniqueEmail("account");
  const session = await signUp(svc, email, options.locale ? { locale: options.locale } : undefined);
  const browser = new Browser(svc);
  const client = await newClient(svc);
  const started = await authorize(svc, client);
  const requestId = await requestIdOf(started);
  await browser.get(location(started).toString());
  await signIn(browser, requestId, email);
  expect(browser.signedIn).toBe(true);
  return { browser, user: session.user, session, email };
}

/** The account page in `browser`, expected to answer 200. */
export async function accountPage(browser: Browser, query = ""): Promise<string> {
  const page = await browser.get(`${ACCOUNT}${query}`);
  expect(page.status, await page.clone().text()).toBe(200);
  return page.text();
}

/** Moves the server's clock (this isolate's `Date`) on by `seconds`: the sign-in becomes that old. */
export function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

/** Past the re-authentication window (5 minutes). */
export const STALE = 6 * 60;

/** The re-authentication with the password, from a gated post's page; then the page comes back to `section`. */
export async function reauthWithPassword(browser: Browser, section: string, password = PASSWORD) {
  const raised = await browser.post(`${ACCOUNT}/reauth/password`, { section, elevated: "1", password });
  expect(raised.status, await raised.clone().text()).toBe(303);
  const back = location(raised);
  expect(back.pathname).toBe("/auth/v1/account");
  expect(back.hash).toBe(`#${section}`);
  return back;
}

/** A refresh with the API: 200 while the session stands, 401 once it has ended. */
export const refresh = (svc: TestService, refreshToken: string) => svc.post("/token", { refreshToken });

export { Browser, location, PASSWORD };
