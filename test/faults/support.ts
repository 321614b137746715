// What every fault test asserts of the answer: the contract's 503 (auth §1 "Unavailable", storage §3.1's shape),
// `Retry-After`, no-store, and nothing of the fault's internals on the wire; on a person's page, the same as a page.
import { expect } from "vitest";
import { allD1, firstInAnyShard } from "../support/shards";

/** Auth API: 503 `service-unavailable` in the contract's error shape, with Retry-After and a request id. */
export async function expectUnavailable(response: Response, context = ""): Promise<void> {
  const text = await response.text();
  expect(response.status, `${context}: ${text}`).toBe(503);
  expect(Number(response.headers.get("retry-after")), context).toBeGreaterThan(0);
  expect(response.headers.get("cache-control"), context).toBe("no-store");
  expect(JSON.parse(text), context).toEqual({
    status: 503,
    error: "service-unavailable",
    message: "the service cannot answer this right now; try again shortly",
    requestId: expect.any(String),
  });
}

/**
 * A fault answered as a page: its status (and `Retry-After` for a 503), never cached, HTML in the page's words with
 * the request id to report, the pages' CSP, and nothing of the fault's internals or of the API's JSON.
 */
export async function expectFaultPage(answer: Response, words: string, status: 500 | 503 = 503) {
  const html = await answer.text();
  expect(answer.status, html.slice(0, 300)).toBe(status);
  expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
  if (status === 503) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  else expect(answer.headers.get("retry-after")).toBeNull();
  expect(answer.headers.get("cache-control")).toBe("no-store");
  const csp = answer.headers.get("content-security-policy") ?? "";
  expect(csp).toMatch(/default-src 'none'/);
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(answer.headers.get("x-frame-options")).toBe("DENY");
  expect(html).toContain(words);
  const requestId = answer.headers.get("x-request-id")!;
  expect(requestId).toBeTruthy();
  expect(html).toContain(`<code>${requestId}</code>`);
  expect(html).not.toMatch(
    /D1_ERROR|SQLITE|Network connection lost|service-unavailable|"status"|\bat \S+:\d+/,
  );
  return html;
}

/** The authorization server's endpoints: RFC 6749's shape, `temporarily_unavailable`, with Retry-After. */
export async function expectOAuth2Unavailable(response: Response): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(503);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(JSON.parse(text)).toEqual({
    error: "temporarily_unavailable",
    error_description: expect.any(String),
  });
}

/** Storage API: 503 in storage's error shape, with Retry-After. */
export async function expectStorageUnavailable(response: Response): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(503);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(JSON.parse(text)).toMatchObject({ error: { message: expect.any(String) } });
  expect(text).not.toMatch(/D1_ERROR|internal error|Durable Object|\bat \S+:\d+/);
}

/** The rows a user has in D1, by email: the user (with its roles) and its sessions, in the user's shard. */
export async function accountOf(email: string) {
  const user = await firstInAnyShard<{ id: string; roles: string; default_role: string }>(
    "SELECT id, roles, default_role FROM users WHERE email = ?",
    email,
  );
  // Counted in every shard: a user made by a one-database service lives in `DB`, wherever its slot would put it.
  let sessions = 0;
  for (const d1 of user ? allD1() : []) {
    sessions += (await d1
      .prepare("SELECT count(*) AS n FROM sessions WHERE user_id = ?")
      .bind(user!.id)
      .first<{ n: number }>())!.n;
  }
  return { user, sessions };
}
