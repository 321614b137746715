// A user's passkeys for the operator (issue 47, docs/passkeys.md "For the operator"): the admin API's
// `GET/DELETE /admin/users/{id}/security-keys[/{keyId}]` and the console user page's section with its Remove button.
// Threats: a key removed through another user's path (cross-user deletion: an operator's slip or a crafted link
// removing a victim's passkey, or the answer telling which ids exist elsewhere); a removal by someone without the admin
// secret or the console session's CSRF token; an unaudited removal; an operator misled about a key (an upgrade's key
// shown as phishing-resistant before any verified use).

import { env } from "cloudflare:test";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { FLAGS, SoftwareAuthenticator } from "../fakes/authenticator";
import { expectError, NO_VERIFICATION, SERVER, service, signUp, type WireSession } from "../helpers";
import { userD1 } from "../support/shards";

const svc = service({ ...NO_VERIFICATION, AUTH_WEBAUTHN_ENABLED: "true" });
const SECRET = String(env.AUTH_ADMIN_SECRET);
const ADMIN = { "x-hasura-admin-secret": SECRET };
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

async function ok<T>(response: Response): Promise<T> {
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body as T;
}

/** A signed-up user with one key: an upgrade's (no gesture, right after the password) or a plain add's (UP and UV). */
async function userWithKey(upgrade: boolean) {
  const session = await signUp(svc);
  const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
  const options = await ok<PublicKeyCredentialCreationOptionsJSON>(
    await svc.post("/user/webauthn/add", upgrade ? { upgrade: true } : {}, session.accessToken),
  );
  const credential = await device.create(options, { flags: upgrade ? 0 : FLAGS.UP | FLAGS.UV });
  const { id } = await ok<{ id: string }>(
    await svc.post(
      "/user/webauthn/verify",
      { credential, nickname: upgrade ? undefined : "YubiKey" },
      session.accessToken,
    ),
  );
  return { session, device, keyId: id };
}

type Key = {
  id: string;
  upgrade: boolean;
  phishingResistant: boolean;
  lastUsedAt: string | null;
  userVerifiedAt: string | null;
};
const keysOf = async (userId: string) =>
  (
    await ok<{ securityKeys: Key[] }>(
      await svc.request("GET", `/admin/users/${userId}/security-keys`, { headers: ADMIN }),
    )
  ).securityKeys;
const removeKey = (userId: string, keyId: string, headers: Record<string, string> = ADMIN) =>
  svc.request("DELETE", `/admin/users/${userId}/security-keys/${encodeURIComponent(keyId)}`, { headers });
const removals = async (userId: string) =>
  (
    (await (
      await svc.request("GET", `/admin/audit?userId=${userId}&type=admin.security-key.remove`, {
        headers: ADMIN,
      })
    ).json()) as { items: { detail: Record<string, unknown> }[] }
  ).items;

const postForm = (path: string, values: Record<string, string>, headers: Record<string, string>) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
  });

describe("a user's passkeys for the operator", () => {
  it("the admin API lists and removes them; cross-user ids, unknown users and non-admins refused; audited", async () => {
    const upgraded = await userWithKey(true);
    const plain = await userWithKey(false);
    // A counterless passkey (most platform authenticators send 0): its use still shows as the last use.
    plain.device.credentials[0]!.counter = -1;
    const options = await ok<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const assertion = await plain.device.get(options, { credential: plain.device.credentials[0] });
    await ok(await svc.post("/signin/webauthn/verify", { credential: assertion }));

    expect(await keysOf(upgraded.session.user.id)).toEqual([
      expect.objectContaining({
        id: upgraded.keyId,
        upgrade: true,
        phishingResistant: false,
        lastUsedAt: null,
      }),
    ]);
    const [plainKey] = await keysOf(plain.session.user.id);
    expect(plainKey).toMatchObject({
      id: plain.keyId,
      upgrade: false,
      phishingResistant: true,
      nickname: "YubiKey",
    });
    expect(Date.now() - Date.parse(plainKey!.lastUsedAt!)).toBeLessThan(60_000);
    expect(plainKey).not.toHaveProperty("publicKey");
    // The upgrade's key used with user verification (its counter moves): phishing-resistant from then on, and used.
    const uvOptions = await ok<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const verified = await upgraded.device.get(uvOptions, { flags: FLAGS.UP | FLAGS.UV });
    await ok(await svc.post("/signin/webauthn/verify", { credential: verified }));
    const [upgradedKey] = await keysOf(upgraded.session.user.id);
    expect(upgradedKey).toMatchObject({ upgrade: true, phishingResistant: true });
    for (const at of [upgradedKey!.lastUsedAt, upgradedKey!.userVerifiedAt]) {
      expect(Date.now() - Date.parse(at!)).toBeLessThan(60_000);
    }

    // Not an admin: no secret, or a user's own access token (the key's owner included).
    await expectError(await removeKey(plain.session.user.id, plain.keyId, {}), 401, "unauthorized");
    await expectError(
      await removeKey(plain.session.user.id, plain.keyId, {
        authorization: `Bearer ${plain.session.accessToken}`,
      }),
      401,
      "unauthorized",
    );
    // Another user's key through this user's path: the same 404 as no key at all, and the key stays.
    await expectError(await removeKey(upgraded.session.user.id, plain.keyId), 404, "not-found");
    await expectError(await removeKey(upgraded.session.user.id, "no-such-key"), 404, "not-found");
    await expectError(await removeKey(crypto.randomUUID(), plain.keyId), 404, "not-found");
    expect(await keysOf(plain.session.user.id)).toHaveLength(1);
    expect(await removals(upgraded.session.user.id)).toEqual([]);

    expect((await removeKey(plain.session.user.id, plain.keyId)).status).toBe(204);
    expect(await keysOf(plain.session.user.id)).toEqual([]);
    expect((await removals(plain.session.user.id)).map((e) => e.detail.keyId)).toEqual([plain.keyId]);
    // Removed means refused at sign-in: the key signs nobody in any more.
    const again = await ok<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const stale = await plain.device.get(again, { credential: plain.device.credentials[0] });
    expect((await svc.post("/signin/webauthn/verify", { credential: stale })).status).toBe(400);
  });

  it("the console's user page shows them (or none) and its Remove button takes one off, with the CSRF token only", async () => {
    const login = await postForm("/login", { secret: SECRET }, {});
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const pageOf = async (userId: string, query = "") => {
      const response = await svc.request("GET", `${BASE}/users/${userId}${query}`, { headers: { cookie } });
      expect(response.status).toBe(200);
      return response.text();
    };
    const upgraded = await userWithKey(true);
    const other = await userWithKey(false);
    const none: WireSession = await signUp(svc);

    const empty = await pageOf(none.user.id);
    expect(empty).toContain("Passkeys and security keys (0)");
    expect(empty).toContain("None: this user signs in without a passkey.");

    const page = await pageOf(upgraded.session.user.id);
    expect(page).toContain("Passkeys and security keys (1)");
    expect(page).toContain(`<code>${upgraded.keyId}</code>`);
    expect(page).toContain('<span class="badge">automatic upgrade</span>');
    expect(page).toContain('<span class="badge off">not yet</span>');
    expect(page).toContain("never used with user verification");
    expect(page).toContain("not since added");
    expect(page).toMatch(/data-label="Transports"[^>]*>[^<]*(this device|USB|a phone)/);
    const removePath = `/users/${upgraded.session.user.id}/security-keys/${upgraded.keyId}/remove`;
    expect(page).toContain(`action="/auth/v1${BASE}${removePath}"`);
    const otherPage = await pageOf(other.session.user.id);
    expect(otherPage).toContain("added by the user");
    expect(otherPage).toContain('<span class="badge on">yes</span>');

    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    // Without the session's token, or from another site: refused, nothing removed.
    expect((await postForm(removePath, { csrf: "forged" }, { cookie })).status).toBe(403);
    expect((await postForm(removePath, { csrf }, { cookie, origin: "https://evil.example" })).status).toBe(
      403,
    );
    expect((await postForm(removePath, { csrf }, {})).status).toBe(403);
    // Another user's key under this user's page: the console's error page, the key kept.
    const crossed = await postForm(
      `/users/${upgraded.session.user.id}/security-keys/${other.keyId}/remove`,
      { csrf },
      { cookie },
    );
    expect(crossed.status).toBe(404);
    expect(await keysOf(other.session.user.id)).toHaveLength(1);
    expect(await keysOf(upgraded.session.user.id)).toHaveLength(1);

    const done = await postForm(removePath, { csrf }, { cookie });
    expect(done.status).toBe(303);
    expect(new URL(done.headers.get("location")!, SERVER).search).toBe("?done=security-key-removed");
    const after = await pageOf(upgraded.session.user.id, "?done=security-key-removed");
    expect(after).toContain("The passkey is removed: it signs nobody in any more.");
    expect(after).toContain("Passkeys and security keys (0)");
    expect((await removals(upgraded.session.user.id)).map((e) => e.detail.keyId)).toEqual([upgraded.keyId]);
    const row = await userD1(upgraded.session.user.id)
      .prepare("SELECT COUNT(*) AS n FROM security_keys WHERE user_id = ?")
      .bind(upgraded.session.user.id)
      .first<{ n: number }>();
    expect(row?.n).toBe(0);
  });
});
