import { describe, expect, it } from "vitest";
import { SECURITY_ON } from "../account-center/security-support";
import { expectError, PASSWORD, service, sessionFromRefresh, type WireSession } from "../helpers";
import { Browser, signIn as pageSignIn } from "../oauth2/page-browser";
import { authorize, newClient, requestIdOf } from "../oauth2/support";
import { userD1 } from "../support/shards";
import {
  admin,
  base32,
  type ImportAnswer,
  importUsers,
  iso,
  nhostBcrypt,
  nhostTokenHash,
  nhostUser,
} from "./support";

/**
 * A delta run after the cut-over never undoes what the owner did here (contract supabase.md §6, issue 42 §1). The
 * threat: an attacker who holds the account at the old Nhost project (its password, a stolen passkey) keeps making
 * refresh tokens, PATs and keys there; the owner remediates here (removes the passkey, changes the password, signs out
 * everywhere), and the next `import-nhost` run must not hand the attacker the account back.
 */

const svc = service({ ...SECURITY_ON, AUTH_REQUIRE_ELEVATED_CLAIM: "disabled" });
const hash = await nhostBcrypt(PASSWORD);
const DAY = 86_400_000;

const signIn = async (email: string, password = PASSWORD) => {
  const response = await svc.post("/signin/email-password", { email, password });
  expect(response.status).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
};

/** A refresh token Nhost made since (the attacker's, or an old client's): the row Nhost's table holds for it. */
async function nhostToken(type: "regular" | "pat" = "regular", id: string = crypto.randomUUID()) {
  const token = crypto.randomUUID();
  const now = Date.now();
  const row = {
    id,
    createdAt: iso(now - 1000),
    expiresAt: iso(now + 29 * DAY),
    metadata: null,
    type,
    hash: await nhostTokenHash(token),
  };
  return { token, row };
}

const securityKey = (id = crypto.randomUUID(), credentialId = `cred-${crypto.randomUUID()}`) => ({
  id,
  credentialId,
  publicKey: "pQECAyYgASFYIG",
  counter: 3,
  transports: "internal",
  nickname: "phone",
});

type Result = Omit<ImportAnswer["results"][number], "warnings"> & {
  warnings?: { table: string; id: string; reason: string; notCarried: boolean }[];
  carried?: { table: string; id: string }[];
};
const resultOf = (answer: ImportAnswer) => answer.results[0] as Result;

describe("a delta run after the owner remediated here", { timeout: 30_000 }, () => {
  it("threat: a passkey removed here comes back neither by its row nor as a new row with its credential id; no new session either", async () => {
    const key = securityKey();
    const { bundle, email } = await nhostUser({ securityKeys: [key] }, hash);
    await importUsers(svc, [bundle]);
    const session = await signIn(email);
    const listed = await svc.get("/user/security-keys", session.accessToken);
    expect(((await listed.json()) as { securityKeys: { id: string }[] }).securityKeys).toHaveLength(1);
    const removed = await svc.request("DELETE", `/user/security-keys/${key.id}`, {
      token: session.accessToken,
    });
    expect(removed.status).toBe(200);

    // At the old project since: the same key still listed, added again under a new row, and a new session.
    const attacker = await nhostToken();
    const delta = {
      ...bundle,
      updatedAt: iso(Date.now()),
      securityKeys: [key, securityKey(undefined, key.credentialId)],
      refreshTokens: [...(bundle.refreshTokens as unknown[]), attacker.row],
    };
    const result = resultOf(await importUsers(svc, [delta]));
    expect(result.outcome).toBe("kept");
    expect(result.reasons?.[0]?.reason).toMatch(
      /credentials changed in this service \(security keys changed\)/,
    );
    const removedHere = result.warnings!.filter((w) => w.table === "auth.user_security_keys");
    expect(removedHere).toHaveLength(2);
    for (const w of removedHere)
      expect(w).toMatchObject({ reason: /removed in this service/, notCarried: false });
    expect(result.warnings).toContainEqual(
      expect.objectContaining({ table: "auth.refresh_tokens", id: attacker.row.id, notCarried: false }),
    );

    const after = await svc.get("/user/security-keys", session.accessToken);
    expect(((await after.json()) as { securityKeys: unknown[] }).securityKeys).toHaveLength(0);
    await expectError(
      await svc.post("/token", { refreshToken: attacker.token }),
      401,
      "invalid-refresh-token",
    );
    // And the next run too: the tombstone and the change are kept in the ledger.
    const again = resultOf(await importUsers(svc, [{ ...delta, displayName: "Again" }]));
    expect(again.outcome).toBe("kept");
    expect(await svc.get("/user/security-keys", session.accessToken).then((r) => r.json())).toEqual({
      securityKeys: [],
    });
  });

  it("threat: after a password change here, Nhost's new session, PAT and reset link are refused; a carried session alive here still rotates in place", async () => {
    const { bundle, email, id, secrets } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const session = await signIn(email);
    const changed = await svc.post(
      "/user/password",
      { newPassword: "a brand new passphrase", signOutOthers: false },
      session.accessToken,
    );
    expect(changed.status).toBe(200);

    // Nhost rotated the carried session's token in place (same row, new hash), and the attacker made more.
    const tokens = bundle.refreshTokens as { id: string; type: string }[];
    const carried = tokens.find((t) => t.type === "regular")!;
    const rotated = await nhostToken("regular", carried.id);
    const attacker = await nhostToken();
    const attackerPat = await nhostToken("pat");
    const delta = {
      ...bundle,
      updatedAt: iso(Date.now()),
      ticket: `passwordReset:${crypto.randomUUID()}`,
      refreshTokens: [...tokens.filter((t) => t.type === "pat"), rotated.row, attacker.row, attackerPat.row],
    };
    const answer = await importUsers(svc, [delta]);
    const result = resultOf(answer);
    expect(result.outcome).toBe("kept");
    expect(result.reasons?.[0]?.reason).toMatch(/password changed/);
    // The report: one reason naming the user, once per row it refused (the command counts them under it).
    const refused = result.warnings!.filter((w) => /credentials changed/.test(w.reason));
    expect(refused.map((w) => w.id).sort()).toEqual([attacker.row.id, attackerPat.row.id, id].sort());
    expect(new Set(refused.map((w) => w.reason)).size).toBe(1);
    expect(refused[0]!.reason).toContain(id);
    expect(result.carried).toEqual([{ table: "auth.refresh_tokens", id: carried.id }]);

    await expectError(
      await svc.post("/token", { refreshToken: attacker.token }),
      401,
      "invalid-refresh-token",
    );
    expect((await svc.post("/signin/pat", { personalAccessToken: attackerPat.token })).status).toBe(401);
    const tickets = await userD1(id)
      .prepare("SELECT count(*) AS n FROM tickets WHERE user_id = ?")
      .bind(id)
      .first();
    expect(tickets).toEqual({ n: 0 });
    // The old token is gone, the rotated one refreshes the same session here.
    await expectError(
      await svc.post("/token", { refreshToken: secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    const renewed = await sessionFromRefresh(svc, rotated.token);
    expect(renewed.refreshTokenId).toBe(carried.id);
  });

  it("threat: after 'sign out all other devices' here, Nhost's new session is refused (the carried ones are gone)", async () => {
    const { bundle, email } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const session = await signIn(email);
    const ended = await svc.request("DELETE", "/user/sessions?others=true", { token: session.accessToken });
    expect(ended.status).toBe(204);

    const attacker = await nhostToken();
    const delta = {
      ...bundle,
      lastSeen: iso(Date.now()),
      updatedAt: iso(Date.now()),
      refreshTokens: [...(bundle.refreshTokens as unknown[]), attacker.row],
    };
    const result = resultOf(await importUsers(svc, [delta]));
    expect(result.outcome).toBe("kept");
    expect(result.reasons?.[0]?.reason).toMatch(/sessions ended/);
    await expectError(
      await svc.post("/token", { refreshToken: attacker.token }),
      401,
      "invalid-refresh-token",
    );
  });

  it("threat: TOTP reset here is not sealed again from Nhost's column; the user is refused new sessions", async () => {
    const withTotp = await nhostUser({ activeMfaType: "totp" }, hash);
    withTotp.bundle.totpSecret = base32(withTotp.secrets.totpSecret);
    await importUsers(svc, [withTotp.bundle]);
    const reset = await svc.request("PATCH", `/admin/users/${withTotp.id}`, {
      json: { activeMfaType: null },
      headers: admin(),
    });
    expect(reset.status).toBe(200);

    const attacker = await nhostToken();
    const delta = {
      ...withTotp.bundle,
      updatedAt: iso(Date.now()),
      refreshTokens: [...(withTotp.bundle.refreshTokens as unknown[]), attacker.row],
    };
    const result = resultOf(await importUsers(svc, [delta]));
    expect(result.outcome).toBe("kept");
    expect(result.reasons?.[0]?.reason).toMatch(/MFA changed/);
    // The password alone signs in: MFA stayed off, no secret came back.
    expect((await signIn(withTotp.email)).user.id).toBe(withTotp.id);
    const user = await svc.request("GET", `/admin/users/${withTotp.id}`, { headers: admin() });
    expect(((await user.json()) as { activeMfaType: string | null }).activeMfaType).toBeNull();
    await expectError(
      await svc.post("/token", { refreshToken: attacker.token }),
      401,
      "invalid-refresh-token",
    );
  });

  it("threat: an identity unlinked in the account center is not linked again, by its row nor by its provider subject", async () => {
    const { bundle, email, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const [identity] = bundle.providers as { id: string; providerId: string; providerUserId: string }[];
    const browser = new Browser(svc);
    await pageSignIn(browser, await requestIdOf(await authorize(svc, await newClient(svc))), email);
    const unlinked = await browser.post("/account/security/providers/unlink", { id: identity!.id });
    expect(unlinked.status).toBe(303);

    const again = { ...identity!, id: crypto.randomUUID() };
    const delta = { ...bundle, updatedAt: iso(Date.now()), providers: [identity, again] };
    const result = resultOf(await importUsers(svc, [delta]));
    expect(result.outcome).toBe("kept");
    expect(result.reasons?.[0]?.reason).toMatch(/provider identity removed/);
    expect(result.warnings!.filter((w) => w.table === "auth.user_providers")).toHaveLength(2);
    const user = await svc.request("GET", `/admin/users/${id}`, { headers: admin() });
    expect(JSON.stringify(await user.json())).not.toContain(identity!.providerUserId);
  });

  it("an identity unlinked here and now another user's is no conflict: the user is not skipped for it", async () => {
    const { bundle, email, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const [identity] = bundle.providers as { id: string; providerId: string; providerUserId: string }[];
    const browser = new Browser(svc);
    await pageSignIn(browser, await requestIdOf(await authorize(svc, await newClient(svc))), email);
    expect((await browser.post("/account/security/providers/unlink", { id: identity!.id })).status).toBe(303);
    // The same provider account, now another user's here (it moved with another Nhost user).
    const other = await nhostUser({ providers: [{ ...identity!, id: crypto.randomUUID() }] }, hash);
    expect((await importUsers(svc, [other.bundle])).results[0]!.outcome).toBe("imported");

    const result = resultOf(await importUsers(svc, [{ ...bundle, updatedAt: iso(Date.now()) }]));
    expect(result.outcome).toBe("kept");
    expect(result.reasons).toHaveLength(1);
    expect(result.reasons![0]!.id).toBe(id);
  });

  it("rule: a user who changed nothing here still gets Nhost's new sessions; carried under a kept row, they count as carried", async () => {
    const { bundle, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    // Changed here, but not a credential: the row is kept, the new session is carried.
    await svc.request("PATCH", `/admin/users/${id}`, {
      json: { displayName: "Renamed Here" },
      headers: admin(),
    });
    const fresh = await nhostToken();
    const delta = {
      ...bundle,
      updatedAt: iso(Date.now()),
      refreshTokens: [...(bundle.refreshTokens as unknown[]), fresh.row],
    };
    const result = resultOf(await importUsers(svc, [delta]));
    expect(result.outcome).toBe("kept");
    expect(result.carried).toEqual([{ table: "auth.refresh_tokens", id: fresh.row.id }]);
    const renewed = await sessionFromRefresh(svc, fresh.token);
    expect(renewed.user.id).toBe(id);
  });
});

describe("a session carried from Nhost in the session list", { timeout: 30_000 }, () => {
  it("is labelled as imported from Nhost in GET /user/sessions and the account center, not as an unknown device", async () => {
    const { bundle, email, secrets } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const carried = (bundle.refreshTokens as { id: string; type: string }[]).find(
      (t) => t.type === "regular",
    )!;
    // Refreshed here once (it moved onto this service's sessions): still the same session, still labelled.
    await sessionFromRefresh(svc, secrets.refreshToken);
    const session = await signIn(email);
    const list = await svc.get("/user/sessions", session.accessToken);
    const { items } = (await list.json()) as {
      items: { id: string; method: string | null; userAgent: null }[];
    };
    expect(items.find((item) => item.id === carried.id)).toMatchObject({
      method: "import:nhost",
      userAgent: null,
    });

    const browser = new Browser(svc);
    await pageSignIn(browser, await requestIdOf(await authorize(svc, await newClient(svc))), email);
    const page = await (await browser.get("/account")).text();
    const at = page.indexOf(`value="${carried.id}"`);
    const row = page.slice(page.lastIndexOf("<tr>", at), at);
    expect(row).toContain("Imported from Nhost");
    expect(row).not.toContain("Unknown device");
  });
});
