import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { runHousekeeping } from "../../src/runtime/cron";
import { expectContractError, expectError, signUp, uniqueAddress, uniqueEmail } from "../helpers";
import { ADMIN, orgWithDomain, ssoService } from "../sso/support";
import { allD1 } from "../support/shards";
import { Browser, makeLink } from "./support";

// Contract operators.md §5, the owner's and the operator's side: making, listing and revoking setup links, and the
// link as a credential (stored as a hash, compared in constant time, refused with one answer, guesses counted).

const svc = ssoService({ AUTH_RATE_LIMIT_ENABLE: "true" });

const sha256Hex = async (value: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)))]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");

/** A page's text without its per-answer CSP nonce. */
const withoutNonce = (page: string) => page.replace(/nonce="[^"]+"/g, 'nonce=""');

const tokenOf = (url: string) => new URL(url).searchParams.get("link")!;

describe("making links", () => {
  it("an owner makes a link for seven days; its token is kept only as a hash; every make is audited", async () => {
    const org = await orgWithDomain(svc);
    const before = Date.now();
    const link = await makeLink(svc, org.orgId, org.owner.accessToken, { intents: ["sso", "scim"] });
    expect(link.url).toMatch(/^http:\/\/localhost:8787\/auth\/v1\/setup\/open\?link=/);
    const lifetime = Date.parse(link.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(7 * 86400_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(7 * 86400_000 + 1000);
    // Threat: a database read (a backup, a replica) gives links away. Only the secret's SHA-256 is stored.
    const [id, secret] = tokenOf(link.url).split(".");
    const row = await env.DB.prepare("SELECT * FROM setup_links WHERE id = ?")
      .bind(id)
      .first<Record<string, string>>();
    expect(row!.secret_hash).toBe(await sha256Hex(secret!));
    expect(JSON.stringify(row)).not.toContain(secret);
    // The owner's events live in the owner's shard.
    const rows = [];
    for (const d1 of allD1()) {
      const { results } = await d1
        .prepare("SELECT type, user_id FROM audit_events WHERE type = 'setup-link.created' AND detail LIKE ?")
        .bind(`%${id}%`)
        .all<{ type: string; user_id: string }>();
      rows.push(...results);
    }
    expect(rows).toEqual([{ type: "setup-link.created", user_id: org.owner.user.id }]);
  });

  it("bad input is a 400 in the contract's shape; other members 403, outsiders 404; expiresIn is honoured", async () => {
    const org = await orgWithDomain(svc);
    for (const body of [
      {},
      { intents: [] },
      { intents: ["sso", "sso"] },
      { intents: ["everything"] },
      { intents: ["sso"], expiresIn: 31 * 86400 },
      { intents: ["sso"], expiresIn: 10 },
      { intents: ["sso"], extra: true },
      { intents: "sso" },
    ]) {
      await expectContractError(
        await svc.post(`/orgs/${org.orgId}/setup-links`, body, org.owner.accessToken),
        JSON.stringify(body),
      );
    }
    const short = await makeLink(svc, org.orgId, org.owner.accessToken, {
      intents: ["domains"],
      expiresIn: 3600,
    });
    expect(Date.parse(short.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
    const outsider = await signUp(svc, uniqueEmail("outsider"));
    await expectError(
      await svc.post(`/orgs/${org.orgId}/setup-links`, { intents: ["sso"] }, outsider.accessToken),
      404,
      "not-found",
    );
    const member = await signUp(svc, uniqueEmail("member"));
    expect(
      (
        await svc.request("POST", `/admin/orgs/${org.orgId}/members`, {
          headers: ADMIN,
          json: { userId: member.user.id, role: "admin" },
        })
      ).status,
    ).toBe(201);
    await expectError(
      await svc.post(`/orgs/${org.orgId}/setup-links`, { intents: ["sso"] }, member.accessToken),
      403,
      "insufficient-org-role",
    );
    await expectError(
      await svc.get(`/orgs/${org.orgId}/setup-links`, member.accessToken),
      403,
      "insufficient-org-role",
    );
    await expectError(
      await svc.post(`/orgs/${org.orgId}/setup-links`, { intents: ["sso"] }),
      401,
      "unauthorized",
    );
  });

  it("the operator makes, lists and revokes any org's links through the admin API (audited)", async () => {
    const org = await orgWithDomain(svc);
    const made = await svc.request("POST", `/admin/orgs/${org.orgId}/setup-links`, {
      headers: ADMIN,
      json: { intents: ["scim"] },
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const listed = (await (
      await svc.request("GET", `/admin/orgs/${org.orgId}/setup-links`, { headers: ADMIN })
    ).json()) as {
      items: { id: string; createdBy: string | null; status: string }[];
    };
    expect(listed.items).toContainEqual(expect.objectContaining({ id, createdBy: null, status: "open" }));
    expect(
      (await svc.request("DELETE", `/admin/orgs/${org.orgId}/setup-links/${id}`, { headers: ADMIN })).status,
    ).toBe(204);
    const one = (await (
      await svc.request("GET", `/admin/orgs/${org.orgId}/setup-links/${id}`, { headers: ADMIN })
    ).json()) as { status: string };
    expect(one.status).toBe("revoked");
    await expectError(
      await svc.request("GET", `/admin/orgs/no-such-org/setup-links`, { headers: ADMIN }),
      404,
      "not-found",
    );
    const { results } = await env.DB.prepare("SELECT type FROM audit_events WHERE detail LIKE ? ORDER BY at")
      .bind(`%${id}%`)
      .all<{ type: string }>();
    expect(results.map((row) => row.type)).toEqual(
      expect.arrayContaining([
        "setup-link.created",
        "admin.setup-link.create",
        "setup-link.revoked",
        "admin.setup-link.revoke",
      ]),
    );
  });

  it("a link is for its own org: another org's link id is 404 to the owner", async () => {
    const mine = await orgWithDomain(svc);
    const theirs = await orgWithDomain(svc);
    const link = await makeLink(svc, theirs.orgId, theirs.owner.accessToken);
    await expectError(
      await svc.get(`/orgs/${mine.orgId}/setup-links/${link.id}`, mine.owner.accessToken),
      404,
      "not-found",
    );
    await expectError(
      await svc.request("DELETE", `/orgs/${mine.orgId}/setup-links/${link.id}`, {
        token: mine.owner.accessToken,
      }),
      404,
      "not-found",
    );
  });
});

describe("housekeeping", () => {
  it("the daily sweep removes links a month past their end and keeps the others for the owners' list", async () => {
    const org = await orgWithDomain(svc);
    const old = await makeLink(svc, org.orgId, org.owner.accessToken);
    const recent = await makeLink(svc, org.orgId, org.owner.accessToken);
    await env.DB.prepare("UPDATE setup_links SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 31 * 86400_000, old.id)
      .run();
    await env.DB.prepare("UPDATE setup_links SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 86400_000, recent.id)
      .run();
    await runHousekeeping(svc.env, getConfig(svc.env));
    const left = await env.DB.prepare("SELECT id FROM setup_links WHERE org_id = ?")
      .bind(org.orgId)
      .all<{ id: string }>();
    expect(left.results.map((row) => row.id)).toEqual([recent.id]);
  });
});

describe("the link as a credential", () => {
  it("revoked, expired, guessed and malformed links all get the one page; a working one sets an HttpOnly cookie", async () => {
    const org = await orgWithDomain(svc);
    const revoked = await makeLink(svc, org.orgId, org.owner.accessToken);
    const expired = await makeLink(svc, org.orgId, org.owner.accessToken);
    const working = await makeLink(svc, org.orgId, org.owner.accessToken);
    expect(
      (
        await svc.request("DELETE", `/orgs/${org.orgId}/setup-links/${revoked.id}`, {
          token: org.owner.accessToken,
        })
      ).status,
    ).toBe(204);
    await env.DB.prepare("UPDATE setup_links SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, expired.id)
      .run();
    const [id] = tokenOf(working.url).split(".");
    const guessed = `${id}.${"A".repeat(43)}`;
    const pages = new Set<string>();
    for (const url of [
      revoked.url,
      expired.url,
      `/setup/open?link=${guessed}`,
      "/setup/open?link=nonsense",
      "/setup/open",
    ]) {
      const browser = new Browser(svc, uniqueAddress());
      const response = await browser.get(url);
      expect(response.status, url).toBe(404);
      expect(response.headers.get("set-cookie") ?? "", url).not.toMatch(/setup-link=[^;]/);
      pages.add(withoutNonce(await response.text()));
    }
    // Threat: telling a revoked link from a mistyped one tells a guesser which ids exist. One answer for all.
    expect(pages.size).toBe(1);

    const browser = new Browser(svc, uniqueAddress());
    const opened = await browser.open(working.url);
    expect(opened.headers.get("set-cookie")).toMatch(
      /^setup-link=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax/,
    );
    expect((await browser.get("/setup")).status).toBe(200);
    // Revoked while in use: the very next page is the same refusal.
    expect(
      (
        await svc.request("DELETE", `/orgs/${org.orgId}/setup-links/${working.id}`, {
          token: org.owner.accessToken,
        })
      ).status,
    ).toBe(204);
    const after = await browser.get("/setup");
    expect(after.status).toBe(404);
    expect(pages.has(withoutNonce(await after.text()))).toBe(true);
  });

  it("wrong tokens are counted per address: past the limit even the right link is refused (429, Retry-After)", async () => {
    const org = await orgWithDomain(svc);
    const link = await makeLink(svc, org.orgId, org.owner.accessToken);
    const guesser = new Browser(svc, uniqueAddress());
    const [id] = tokenOf(link.url).split(".");
    const statuses: number[] = [];
    for (let guess = 0; guess < 11; guess++) {
      statuses.push(
        (await guesser.get(`/setup/open?link=${id}.${guess.toString().padStart(43, "x")}`)).status,
      );
    }
    expect(statuses.slice(0, 10).every((status) => status === 404)).toBe(true);
    expect(statuses[10]).toBe(429);
    const right = await guesser.get(link.url);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is not held back by this one's guesses.
    await new Browser(svc, uniqueAddress()).open(link.url);
  });
});
