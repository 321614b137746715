// Shared by the external-provider tests: a service with the fake providers of test/fakes/outbound.js switched on,
// and the journey a browser makes: the service → the provider (the test plays the person there) → the callback.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { NO_VERIFICATION, SERVER, service, type TestService } from "../helpers";
import { userD1 } from "../support/shards";

export const APP = "https://app.example.com/after-sign-in";

export const FAKE_PROVIDERS = {
  ...NO_VERIFICATION,
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
  AUTH_PROVIDER_GITHUB_ENABLED: "true",
  AUTH_PROVIDER_GITHUB_CLIENT_ID: "gh-client",
  AUTH_PROVIDER_GITHUB_CLIENT_SECRET: "gh-secret",
  AUTH_PROVIDER_GITHUB_AUTHORIZATION_URL: "https://github.fake/login/oauth/authorize",
  AUTH_PROVIDER_GITHUB_TOKEN_URL: "https://github.fake/login/oauth/access_token",
  AUTH_PROVIDER_GITHUB_USERINFO_URL: "https://github.fake/user",
  AUTH_PROVIDER_GOOGLE_ENABLED: "true",
  AUTH_PROVIDER_GOOGLE_CLIENT_ID: "google-client",
  AUTH_PROVIDER_GOOGLE_CLIENT_SECRET: "google-secret",
  AUTH_PROVIDER_GOOGLE_AUTHORIZATION_URL: "https://oidc.fake/authorize",
  AUTH_PROVIDER_GOOGLE_TOKEN_URL: "https://oidc.fake/token",
  AUTH_PROVIDER_GOOGLE_USERINFO_URL: "https://oidc.fake/userinfo",
  AUTH_PROVIDER_GOOGLE_JWKS_URL: "https://oidc.fake/jwks",
  AUTH_PROVIDER_GOOGLE_ISSUER: "https://oidc.fake",
};

export function withProviders(overrides: Record<string, unknown> = {}): TestService {
  return service({ ...FAKE_PROVIDERS, ...overrides });
}

/** Who the person is at the fake provider, and what it does (test/fakes/outbound.js). */
export interface FakeUser {
  fake_id?: string;
  fake_email?: string;
  fake_verified?: "true" | "false";
  fake_name?: string;
  fake_deny?: "1";
  fake_fail?: "token" | "garbage" | "profile" | "hang";
  fake_nonce?: string;
}

export function location(response: Response): URL {
  expect(response.status, `expected a redirect, got ${response.status}`).toBeGreaterThanOrEqual(300);
  expect(response.status).toBeLessThan(400);
  return new URL(response.headers.get("location")!);
}

/** The cookies a response sets, as a browser would send them back (`name=value; …`). */
export function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
}

/**
 * The start of a provider sign-in in one browser: the provider URL, and the cookie that browser now holds. A link
 * (`connect`) asks first (src/providers/ask-first.ts); the person here says yes.
 */
export async function startAt(svc: TestService, provider: string, query: Record<string, string> = {}) {
  const start = await svc.get(
    `/signin/provider/${provider}?${new URLSearchParams({ redirectTo: APP, ...query })}`,
  );
  const cookie = cookiesOf(start);
  if (query.connect === undefined || start.status !== 200) return { atProvider: location(start), cookie };
  return { atProvider: location(await answerQuestion(svc, start, cookie)), cookie };
}

/**
 * The user's address marked confirmed, as its verification link would mark it: the question names an account only by
 * a confirmed address or number (src/providers/ask-first.ts), and these tests' sign-ups skip the link.
 */
export async function confirmEmail(userId: string): Promise<void> {
  await userD1(userId).prepare("UPDATE users SET email_verified = 1 WHERE id = ?").bind(userId).run();
}

/** The question's form, as its page holds it: where it posts, and the sealed way on. */
export async function questionOf(page: Response) {
  expect(page.status, "expected the question's page").toBe(200);
  const body = await page.text();
  const action = /<form method="post" action="([^"]+)">/.exec(body)?.[1];
  const continuation = /name="continuation" value="([^"]+)"/.exec(body)?.[1];
  expect(action && continuation, "the question's form").toBeTruthy();
  return { body, action: new URL(action!, SERVER).toString(), continuation: continuation! };
}

/** The question of a link or a connection answered "yes" by the browser holding `cookie`, from the page's origin. */
export async function answerQuestion(
  svc: TestService,
  page: Response,
  cookie: string,
  origin = new URL(SERVER).origin,
): Promise<Response> {
  const { action, continuation } = await questionOf(page);
  return svc.request("POST", action, {
    headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ continuation }).toString(),
  });
}

/** A browser with `cookie` (none: a fresh browser) opening `url` on the service. */
export function openIn(svc: TestService, url: URL | string, cookie = ""): Promise<Response> {
  return svc.request("GET", url.toString(), { headers: cookie ? { cookie } : {} });
}

/** The whole journey in one browser; returns where it lands in the app, the URLs on the way and its cookie. */
export async function signInWith(
  svc: TestService,
  provider: string,
  query: Record<string, string> = {},
  person: FakeUser = {},
) {
  const { atProvider, cookie } = await startAt(svc, provider, query);
  for (const [name, value] of Object.entries(person)) atProvider.searchParams.set(name, value);
  const answer = await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" });
  const callback = location(answer);
  const back = location(await openIn(svc, callback, cookie));
  return { atProvider, callback, back, cookie };
}

/** What the fake provider's token endpoint received for a code. */
export async function receivedByProvider(host: string, code: string): Promise<Record<string, string> | null> {
  const response = await env.OUTBOUND!.fetch(`https://${host}/__received?code=${encodeURIComponent(code)}`);
  return response.json();
}

export const CALLBACK = (provider: string) => `${SERVER}/auth/v1/signin/provider/${provider}/callback`;

/**
 * An ID token signed by the fake OIDC provider of test/fakes/outbound.js (it plays Google: issuer `https://oidc.fake`,
 * audience `ios-client`, five minutes), with `claims` on top.
 */
export async function mintIdToken(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const response = await env.OUTBOUND!.fetch("https://oidc.fake/__mint", {
    method: "POST",
    body: JSON.stringify({
      iss: "https://oidc.fake",
      aud: "ios-client",
      iat: now,
      exp: now + 300,
      ...claims,
    }),
  });
  return response.text();
}
