import { env } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { WireAuditEvent } from "../../src/admin/wire";
import { FAILURE_WINDOW_MS } from "../../src/audit/sign-in-failures";
import { getConfig } from "../../src/runtime/config";
import { runHousekeeping } from "../../src/runtime/cron";
import { NO_VERIFICATION, PASSWORD, service, signUp, uniqueAddress, uniqueEmail } from "../helpers";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

async function eventsOf(userId: string, query = ""): Promise<WireAuditEvent[]> {
  const response = await svc.request("GET", `/admin/audit?userId=${userId}&limit=500${query}`, {
    headers: ADMIN,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: WireAuditEvent[] }).items;
}

const types = (events: WireAuditEvent[]) => events.map((event) => event.type).reverse();

/** The failure events (single and aggregated) recorded for a client address. */
async function failuresFrom(ip: string): Promise<WireAuditEvent[]> {
  const events: WireAuditEvent[] = [];
  for (const type of ["signin.failure", "signin.failure.repeated"]) {
    const response = await svc.request("GET", `/admin/audit?type=${type}&limit=500`, { headers: ADMIN });
    events.push(...((await response.json()) as { items: WireAuditEvent[] }).items.filter((e) => e.ip === ip));
  }
  return events;
}

describe("audit log: the flows write their events", () => {
  it("records sign-up, sign-in success and failure (with method, email, address and agent), newest first", async () => {
    const email = uniqueEmail("audited");
    const session = await signUp(svc, email);
    const headers = { "cf-connecting-ip": "203.0.113.9", "user-agent": "audit-test/1.0" };
    await svc.request("POST", "/signin/email-password", {
      headers,
      json: { email, password: "wrong password" },
    });
    await svc.request("POST", "/signin/email-password", { headers, json: { email, password: PASSWORD } });
    const events = await eventsOf(session.user.id);
    // The sign-in came from another device than the sign-up (its address and browser): its risk is recorded too
    // (medium, `new-device`: src/risk/, docs/risk.md).
    expect(types(events)).toEqual(["signup", "signin.risk", "signin.success"]);
    expect(events[0]!.detail).toMatchObject({ method: "email-password" });
    expect(events[0]).toMatchObject({ ip: "203.0.113.9", userAgent: "audit-test/1.0" });

    // A failure names no user (the credentials did not say who), but the email it tried.
    const failures = (
      (await (
        await svc.request("GET", "/admin/audit?type=signin.failure&limit=500", { headers: ADMIN })
      ).json()) as {
        items: WireAuditEvent[];
      }
    ).items.filter((event) => event.detail.email === email);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      ip: "203.0.113.9",
      detail: { method: "email-password", error: "invalid-email-password" },
    });
  });

  it("keeps an address with no account only as a keyed hash, the same for the same address", async () => {
    const stranger = uniqueEmail("nobody");
    const headers = { "cf-connecting-ip": uniqueAddress() };
    for (const typed of [stranger, stranger.toUpperCase()]) {
      await svc.request("POST", "/signin/email-password", {
        headers,
        json: { email: typed, password: "whatever!" },
      });
    }
    const mine = (await failuresFrom(headers["cf-connecting-ip"])).filter((e) => e.type === "signin.failure");
    expect(mine).toHaveLength(2);
    for (const event of mine) {
      expect(event.detail.email).toBeUndefined();
      expect(event.detail.emailHash).toMatch(/^[0-9a-f]{32}$/);
      expect(JSON.stringify(event)).not.toContain(stranger.split("@")[0]);
    }
    expect(mine[0]!.detail.emailHash).toBe(mine[1]!.detail.emailHash);
  });

  // Threat: a credential-stuffing flood from one address buries every other event under thousands of rows.
  // 26 failed sign-ins, each an argon2id check: ~1.8 s on a quiet machine, 3.2 s seen on a busy one.
  it("aggregates an address's failures past ten per window into one event that counts them", async () => {
    const ip = uniqueAddress();
    // A minute into a window: the 25 attempts all fall in it, whenever the test runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Math.ceil(Date.now() / FAILURE_WINDOW_MS) * FAILURE_WINDOW_MS + 60_000);
    onTestFinished(() => {
      vi.useRealTimers();
    });
    for (let i = 0; i < 25; i++) {
      await svc.request("POST", "/signin/email-password", {
        headers: { "cf-connecting-ip": ip },
        json: { email: uniqueEmail("flood"), password: "wrong password" },
      });
    }
    const events = await failuresFrom(ip);
    expect(events.filter((e) => e.type === "signin.failure")).toHaveLength(10);
    const repeated = events.filter((e) => e.type === "signin.failure.repeated");
    expect(repeated).toHaveLength(1);
    expect(repeated[0]!.detail).toMatchObject({ count: 15 });
    // Another address's failure in the same window is an event of its own.
    const other = `198.51.100.${(Number(ip.split(".")[3]) + 1) % 250}`;
    await svc.request("POST", "/signin/email-password", {
      headers: { "cf-connecting-ip": other },
      json: { email: uniqueEmail("other"), password: "wrong password" },
    });
    expect((await failuresFrom(other)).map((e) => e.type)).toContain("signin.failure");
  }, 20_000);

  // Threat: a stolen refresh token used after its owner rotated; the operator must see it happened.
  it("records a refresh replay that revoked the session", async () => {
    const session = await signUp(svc);
    expect((await svc.post("/token", { refreshToken: session.refreshToken })).status).toBe(200);
    // Past the grace window (10 s by default): a replay.
    const late = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await late.post("/token", { refreshToken: session.refreshToken })).status).toBe(401);
    const replay = (await eventsOf(session.user.id, "&type=refresh.replay"))[0];
    expect(replay?.detail).toMatchObject({ sessionId: session.refreshTokenId });
  });

  it("records password change, PAT creation, MFA-free account changes and the admin's own actions", async () => {
    const session = await signUp(svc);
    expect(
      (await svc.post("/user/password", { newPassword: "another good password" }, session.accessToken))
        .status,
    ).toBe(200);
    const pat = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      session.accessToken,
    );
    expect(pat.status).toBe(200);
    const patch = await svc.request("PATCH", `/admin/users/${session.user.id}`, {
      headers: ADMIN,
      json: { displayName: "Audited" },
    });
    expect(patch.status).toBe(200);
    expect(
      (await svc.request("DELETE", `/admin/users/${session.user.id}/sessions`, { headers: ADMIN })).status,
    ).toBe(204);
    const events = await eventsOf(session.user.id);
    expect(types(events)).toEqual([
      "signup",
      "password.change",
      "pat.created",
      "admin.user.update",
      "admin.sessions.revoke-all",
    ]);
    expect(events[1]!.detail).toMatchObject({ fields: ["displayName"] });
  });

  it("filters by type, pages with a cursor, and the daily cron prunes events past the retention", async () => {
    const session = await signUp(svc);
    for (let i = 0; i < 3; i++) {
      await svc.post("/signin/email-password", { email: session.user.email, password: PASSWORD });
    }
    const first = await svc.request(
      "GET",
      `/admin/audit?userId=${session.user.id}&type=signin.success&limit=2`,
      {
        headers: ADMIN,
      },
    );
    const page1 = (await first.json()) as { items: WireAuditEvent[]; nextCursor: string };
    expect(page1.items).toHaveLength(2);
    const second = await svc.request(
      "GET",
      `/admin/audit?userId=${session.user.id}&type=signin.success&limit=2&cursor=${page1.nextCursor}`,
      { headers: ADMIN },
    );
    const page2 = (await second.json()) as { items: WireAuditEvent[]; nextCursor: string | null };
    expect(page2.items).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
    expect(new Set([...page1.items, ...page2.items].map((e) => e.id)).size).toBe(3);

    // 91 days later (retention 90 by default) the cron removes them.
    await runHousekeeping(env as never, getConfig(env), Date.now() + 91 * 86_400_000);
    expect(await eventsOf(session.user.id)).toEqual([]);
  });
});
