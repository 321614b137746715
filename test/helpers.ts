import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import type { Method, SignInScope } from "../src/auth";
import { shardsOf } from "../src/db/shards";
import type { Deps } from "../src/http/deps";
import { visitorOf } from "../src/http/visitor";
import worker from "../src/index";
import { getConfig } from "../src/runtime/config";
import { checkAnswer } from "./openapi/answers";
import { userD1 } from "./support/shards";

export const SERVER = "http://localhost:8787";
export const PREFIX = "/auth/v1";

export interface RequestOptions {
  json?: unknown;
  body?: BodyInit;
  token?: string;
  headers?: Record<string, string>;
  /** What Cloudflare would say of the client (`request.cf`: city, region, country…); absent by default, as in tests. */
  cf?: Partial<IncomingRequestCfProperties>;
}

export type TestService = ReturnType<typeof service>;

/**
 * The Worker's own fetch handler with the test bindings plus `overrides` (config switches per test). Requests go
 * through the whole HTTP surface: routing, middleware, validation, error handling.
 */
export function service(overrides: Record<string, unknown> = {}) {
  const testEnv = { ...env, ...overrides };
  async function request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = new Headers(options.headers);
    if (options.json !== undefined) headers.set("content-type", "application/json");
    if (options.token) headers.set("authorization", `Bearer ${options.token}`);
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
    const ctx = createExecutionContext();
    const url = path.startsWith("http") ? path : `${SERVER}${PREFIX}${path}`;
    const init = { method, headers, body, cf: options.cf as IncomingRequestCfProperties | undefined };
    const response = await worker.fetch!(new Request(url, init), testEnv, ctx);
    await waitOnExecutionContext(ctx);
    await checkAnswer(testEnv, method, url, response);
    return response;
  }
  return {
    env: testEnv,
    request,
    get: (path: string, token?: string) => request("GET", path, { token }),
    post: (path: string, json?: unknown, token?: string) => request("POST", path, { json, token }),
  };
}

/** Most tests do not exercise email verification; they switch it off. */
export const NO_VERIFICATION = { AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" };

export function uniqueEmail(tag = "user"): string {
  return `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

export const PASSWORD = "correct horse battery";

export interface WireSession {
  accessToken: string;
  accessTokenExpiresIn: number;
  refreshToken: string;
  refreshTokenId: string;
  user: { id: string; email: string; [key: string]: unknown };
}

/** Signs up a user (verification off) and returns the session. */
export async function signUp(
  svc: TestService,
  email = uniqueEmail(),
  options?: unknown,
  password = PASSWORD,
): Promise<WireSession> {
  const response = await svc.post("/signup/email-password", { email, password, options });
  const body = (await response.json()) as { session: WireSession | null };
  if (response.status !== 200 || !body.session) throw new Error(`sign-up failed: ${JSON.stringify(body)}`);
  return body.session;
}

export async function expectError(
  response: Response,
  status: number,
  code: string,
): Promise<{ message: string }> {
  const body = (await response.json()) as { status: number; error: string; message: string };
  if (response.status !== status || body.error !== code || body.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${JSON.stringify(body)}`);
  }
  if (response.headers.get("cache-control") !== "no-store") throw new Error("error answer without no-store");
  return body;
}

export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = token
    .split(".")
    .slice(0, 2)
    .map((part) => JSON.parse(atob(part.replace(/-/g, "+").replace(/_/g, "/"))));
  return { header, payload };
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  createdAt: string;
}

/** Messages of the development mailbox for `to`, newest first. */
export async function mailbox(svc: TestService, to: string): Promise<Mail[]> {
  const response = await svc.get(`/dev/mailbox?to=${encodeURIComponent(to)}`);
  if (response.status !== 200) throw new Error(`mailbox: ${response.status}`);
  return (await response.json()) as Mail[];
}

/** The `/verify` link of a mail, as a path relative to the auth prefix. */
export function verifyPath(mail: Mail): string {
  const match = /(http\S+\/verify\?\S+)/.exec(mail.text);
  if (!match) throw new Error(`no link in mail: ${mail.text}`);
  const url = new URL(match[1]!);
  return `${url.pathname.replace(PREFIX, "")}${url.search}`;
}

/** Follows a `/verify` path and returns the redirect's query parameters. */
export async function follow(svc: TestService, path: string): Promise<URLSearchParams> {
  const response = await svc.request("GET", path);
  if (response.status !== 302) throw new Error(`verify answered ${response.status}`);
  return new URL(response.headers.get("location")!).searchParams;
}

export async function sessionFromRefresh(svc: TestService, refreshToken: string): Promise<WireSession> {
  const response = await svc.post("/token", { refreshToken });
  if (response.status !== 200) throw new Error(`refresh failed: ${await response.text()}`);
  return (await response.json()) as WireSession;
}

/**
 * Service dependencies as the request context builds them, for calling services directly with a clock the test
 * moves. Mail and SMS refuse: tests that send use the HTTP surface.
 */
export function testDeps(bindings: Record<string, unknown>, clock: { now: number }): Deps {
  const refuse = () => Promise.reject(new Error("no transport in service-level tests"));
  const config = getConfig(bindings);
  const shards = shardsOf(bindings, config.shards);
  return {
    config,
    db: shards.home,
    shards,
    env: bindings as Deps["env"],
    mailer: { send: refuse },
    sms: { send: refuse },
    now: () => clock.now,
    outbound: fetch,
    background: () => {},
    audit: Object.assign(() => {}, {
      signInFailure: () => {},
      actAs: () => {},
      actor: () => ({ kind: "user" as const }),
    }),
    visitor: visitorOf(new Headers()),
    requestId: "test",
  };
}

/** A sign-in scope over service-level `deps` (src/auth/sign-in/scope.ts), as a route would build it. */
export function testScope(deps: Deps, method: Method | null): SignInScope {
  return {
    deps,
    requestId: "test",
    method,
    signUp: false,
    userAgent: undefined,
    dpopJkt: null,
    fetchSite: undefined,
    giveDeviceCookie: () => {},
    checked: new Set(),
  };
}

/** A 4xx in the contract's error shape, no-store, and no internals in the message: never a 5xx. */
export async function expectContractError(response: Response, context: string) {
  expect(response.status, context).toBeGreaterThanOrEqual(400);
  expect(response.status, context).toBeLessThan(500);
  expect(response.headers.get("content-type"), context).toMatch(/application\/json/);
  expect(response.headers.get("cache-control"), context).toBe("no-store");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body, context).toEqual({
    status: response.status,
    message: expect.any(String),
    error: expect.any(String),
  });
  expect(body.message as string, context).not.toMatch(/\bat \S+:\d+|ZodError|stack/i);
}

/** The audit trail of a user as stored (contract §10), in the user's shard: event types, oldest first. */
export async function auditTypesOf(userId: string): Promise<string[]> {
  const { results } = await userD1(userId)
    .prepare("SELECT type FROM audit_events WHERE user_id = ? ORDER BY at, rowid")
    .bind(userId)
    .all<{ type: string }>();
  return results.map((row) => row.type);
}

/**
 * A client address no other test uses: a random /64 of the IPv6 documentation prefix. Tests that count what one
 * address did (audit events, rate limits) share one database; a random TEST-NET-1 address (256 of them) collides.
 */
export function uniqueAddress(): string {
  const group = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8:${group()}:${group()}:${group()}:${group()}::1`;
}
