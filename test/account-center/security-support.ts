// What the security sections' tests share: a browser signed in to the built-in pages, the account page's parts, a
// server clock that moves on (a confirmation grows old), and a passkey of the user's held by a software authenticator.
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { expect, vi } from "vitest";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { signUp, type TestService, uniqueEmail, type WireSession } from "../helpers";
import { Browser, signIn } from "../oauth2/page-browser";
import { authorize, location, newClient, PROVIDER_ON, requestIdOf } from "../oauth2/support";

/** The sections' switches on; the OAuth2 page signs the browser in (the hosted sign-in is another file's subject). */
export const SECURITY_ON = { ...PROVIDER_ON, AUTH_MFA_ENABLED: "true", AUTH_WEBAUTHN_ENABLED: "true" };

export interface SignedIn {
  browser: Browser;
  email: string;
  /** An API session of the same user (signed up through the API). */
  api: WireSession;
}

/** A new user, and a browser signed in to the pages as them just now (so recently confirmed). */
export async function signedInBrowser(svc: TestService, tag = "security"): Promise<SignedIn> {
  const email = uniqueEmail(tag);
  const api = await signUp(svc, email);
  const browser = new Browser(svc);
  const requestId = await requestIdOf(await authorize(svc, await newClient(svc)));
  await signIn(browser, requestId, email);
  expect(browser.signedIn).toBe(true);
  return { browser, email, api };
}

/** The account page's HTML. */
export async function accountPage(browser: Browser): Promise<string> {
  const response = await browser.get("/account");
  expect(response.status).toBe(200);
  return response.text();
}

/** Moves the server's clock (the same isolate's `Date`) on by `minutes`: the sign-in becomes that old. */
export function later(minutes: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + minutes * 60_000);
}

/** A 303 back to the account page at `#section`, and the notice it asks for. */
export function backTo(response: Response, section: string): string | null {
  expect(response.status).toBe(303);
  const target = location(response);
  expect(target.pathname).toBe("/auth/v1/account");
  expect(target.hash).toBe(`#${section}`);
  return target.searchParams.get("notice");
}

/** The ids the list buttons of `action` post, in page order (each row's form carries its id in a hidden field). */
export function hiddenValues(html: string, action: string): string[] {
  const forms = html.split("<form").filter((part) => part.includes(`action="${action}"`));
  return forms.map((part) => /name="id" value="([^"]+)"/.exec(part)?.[1] ?? "");
}

/** A passkey added to the user's account through the API, held by a software authenticator. */
export async function apiPasskey(svc: TestService, session: WireSession, nickname = "api key") {
  const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
  const added = await svc.post("/user/webauthn/add", {}, session.accessToken);
  expect(added.status).toBe(200);
  const credential = await device.create((await added.json()) as PublicKeyCredentialCreationOptionsJSON);
  const verified = await svc.post("/user/webauthn/verify", { credential, nickname }, session.accessToken);
  expect(verified.status).toBe(200);
  return device;
}

/** What the re-authentication's passkey script does: a ceremony with the API; the session's refresh token. */
export async function passkeyCeremony(svc: TestService, device: SoftwareAuthenticator, email: string) {
  const started = await svc.post("/signin/webauthn", { email });
  const options = (await started.json()) as PublicKeyCredentialRequestOptionsJSON;
  const verified = await svc.post("/signin/webauthn/verify", { credential: await device.get(options) });
  expect(verified.status).toBe(200);
  return ((await verified.json()) as { session: WireSession }).session.refreshToken;
}

/** HTML entities as `html` writes them in attribute values, undone (the passkey step's options). */
export const unescapeAttribute = (value: string) =>
  value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
