// Shared by the compatibility tests: a fresh @nhost/nhost-js client against the `wrangler dev` server, and the
// development mailbox read over HTTP the way a person would read their mail.
import { spawn } from "node:child_process";
import { createClient } from "@nhost/nhost-js";
import { FetchError } from "@nhost/nhost-js/fetch";
import { MemoryStorage } from "@nhost/nhost-js/session";
import { expect, inject } from "vitest";

export const serverUrl = inject("serverUrl");
export const authUrl = `${serverUrl}/auth/v1`;
export const REDIRECT = "https://app.example.com/after";

export function client() {
  return createClient({ authUrl, storageUrl: `${serverUrl}/storage/v1`, storage: new MemoryStorage() });
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

export async function latestMail(to: string): Promise<{ subject: string; text: string }> {
  const response = await fetch(`${authUrl}/dev/mailbox?to=${encodeURIComponent(to)}`);
  const mails = (await response.json()) as { subject: string; text: string }[];
  if (!mails[0]) throw new Error(`no mail for ${to}`);
  return mails[0];
}

/** The `/verify` link of the newest mail to `to`. */
export async function mailedLink(to: string): Promise<URL> {
  const mail = await latestMail(to);
  return new URL(/(http\S+\/verify\?\S+)/.exec(mail.text)![1]!);
}

/** Follows a link as a browser would and returns where it redirects. */
export async function followLink(link: URL | string): Promise<URL> {
  const response = await fetch(link, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

/** Follows a mailed link of the Supabase face (GoTrue's `/verify`, a 303) as a browser would; where it lands. */
export async function followGoTrueLink(link: URL | string): Promise<URL> {
  const response = await fetch(link, { redirect: "manual" });
  expect(response.status).toBe(303);
  return new URL(response.headers.get("location")!);
}

/** The contract's error body of a call the client rejected. */
export async function rejection(
  call: Promise<unknown>,
): Promise<FetchError<{ error: string; message: string }>> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FetchError);
  return error as FetchError<{ error: string; message: string }>;
}

export const PASSWORD = "correct horse battery";

/** A user who signed up, verified the address from the mail, and signed in: what a real person would have. */
export async function verifiedUser(tag: string): Promise<{ email: string; accessToken: string }> {
  const email = uniqueEmail(tag);
  const post = (path: string, body: unknown) =>
    fetch(`${authUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  await post("/signup/email-password", { email, password: PASSWORD, options: { redirectTo: REDIRECT } });
  await followLink(await mailedLink(email));
  const body = (await (await post("/signin/email-password", { email, password: PASSWORD })).json()) as {
    session: { accessToken: string };
  };
  return { email, accessToken: body.session.accessToken };
}

/**
 * A Turnstile token the compat server's fake siteverify accepts once (test/fakes/outbound.js): solved on the
 * server's host for `action`.
 */
export function turnstileToken(action: string): string {
  return `pass:${new URL(serverUrl).hostname}:${action}:${crypto.randomUUID()}`;
}

/**
 * The question of a link or a connection (src/providers/ask-first.ts) answered yes in the browser holding `cookie`:
 * the page's form, posted from the page's origin.
 */
export async function answerQuestion(page: Response, at: string | URL, cookie: string): Promise<Response> {
  const body = await page.text();
  const action = /<form method="post" action="([^"]+)">/.exec(body)?.[1];
  const continuation = /name="continuation" value="([^"]+)"/.exec(body)?.[1];
  expect(action && continuation, "the question's form").toBeTruthy();
  return fetch(new URL(action!, at), {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: new URL(at).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ continuation: continuation! }).toString(),
  });
}

/**
 * The browser's part: follow each redirect, acting as the person at the provider with `person`, and sending back to
 * the service the cookie it set at the start (the flow is bound to the browser that started it).
 */
export async function browse(start: string, person: Record<string, string>): Promise<URL> {
  const opened = await fetch(start, { redirect: "manual" });
  const cookie = opened.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  // A connection (or a link) asks first: the person says yes.
  const toProvider = opened.status === 200 ? await answerQuestion(opened, start, cookie) : opened;
  expect([302, 303]).toContain(toProvider.status);
  const atProvider = new URL(toProvider.headers.get("location")!);
  for (const [name, value] of Object.entries(person)) atProvider.searchParams.set(name, value);
  const toCallback = await fetch(atProvider, { redirect: "manual" });
  expect(toCallback.status).toBe(302);
  const toApp = await fetch(toCallback.headers.get("location")!, { redirect: "manual", headers: { cookie } });
  expect(toApp.status).toBe(302);
  return new URL(toApp.headers.get("location")!);
}

/** What an import command's `--json` run printed: its exit code, its stderr, and the report on stdout. */
export interface CommandRun<Report> {
  code: number | null;
  stderr: string;
  report: Report;
}

/**
 * `npm run admin -- <command>` as a person runs it against a deployment: `--server` and `--json`, ADMIN_SECRET (and
 * `env`) in the environment, never the developer's AUTH_URL. A report that is not JSON is `empty`.
 */
export function runAdminCommand<Report>(
  command: string,
  args: string[],
  env: Record<string, string>,
  empty: Report,
): Promise<CommandRun<Report>> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["scripts/admin.mjs", command, ...args, "--server", authUrl, "--json"],
      {
        env: { ...process.env, ADMIN_SECRET: inject("adminSecret"), AUTH_URL: "", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += chunk));
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      let report = empty;
      try {
        report = JSON.parse(stdout) as Report;
      } catch {}
      resolve({ code, stderr, report });
    });
  });
}
