import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { supabaseClient, supabaseService } from "../faces/supabase/support";
import { PASSWORD } from "../helpers";
import { idpMetadataXml } from "../sso/saml-support/idp";
import { admin, base32, importUsers, iso, nhostBcrypt, nhostUser, sha256Hex } from "./support";

/**
 * Supabase users stay signed in (contract supabase.md §5): GoTrue's sessions imported through the admin import API
 * (src/move-in/wire.ts `supabaseSessions`) refresh through the Supabase face with the real supabase-js, as the same
 * user and the same session, then rotate in the service's own single-use families. The reuse interval is 0 here so
 * that a replay is a replay (the face's grace window is tested in test/faces/supabase/auth-session.test.ts).
 */

const svc = supabaseService({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
const hash = await nhostBcrypt(PASSWORD);
const DAY = 86_400_000;

/**
 * A GoTrue v2 refresh token, made by an implementation independent of the Worker's: Python 3's hmac/hashlib/base64
 * following GoTrue's internal/crypto/refresh_tokens.go `Encode` (supabase/auth at bc32168):
 *   r = b'\x00' + uuid.bytes + uvarint(counter); r += hmac(key, r, sha256)[:16]; r += sha256(r)[:4]; b64url(r)
 * with key = bytes(range(32)), session 6a0f3b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b, counter 300 (and 299, the one before).
 */
const V2 = {
  key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
  session: "6a0f3b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
  counter: 300,
  token: "AGoPOy4cTU5fipsMHS4_SlusAlGVjuhXiVuTqKuXosf0VMei8yT3",
  previous: "AGoPOy4cTU5fipsMHS4_SlurAlAwAmyJduHtDZDKsnbc5jWqsA6K",
};
/** The same made for session 3c9e1d7a-5b2f-4a6e-9d8c-7b6a5f4e3d2c (same key, counters 300 and 299). */
const V2B = {
  session: "3c9e1d7a-5b2f-4a6e-9d8c-7b6a5f4e3d2c",
  token: "ADyeHXpbL0punYx7al9OPSysAu3NfWLPx-HJRBbC4qrqBem7zECv",
  previous: "ADyeHXpbL0punYx7al9OPSyrAtVdeXXb2MHQnT8uIr2oeg8jDglC",
};

/** GoTrue's 12-character refresh token (`^[a-z0-9]{12}$`), as auth.refresh_tokens.token holds it. */
const v1Token = () =>
  Array.from(
    crypto.getRandomValues(new Uint8Array(12)),
    (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36],
  ).join("");

interface V1 {
  id: number;
  token: string;
  revoked: boolean;
  /** `auth.refresh_tokens.parent`: the token this one replaced. */
  parent?: string;
}

async function v1Session(tokens: V1[], sessionId = crypto.randomUUID()) {
  const now = Date.now();
  return {
    id: sessionId,
    createdAt: iso(now - 10 * DAY),
    notAfter: null,
    aal: "aal1",
    refreshTokens: await Promise.all(
      tokens.map(async (t) => ({
        id: String(t.id),
        tokenHash: await sha256Hex(t.token),
        revoked: t.revoked,
        createdAt: iso(now - DAY + t.id * 1000),
        parentHash: t.parent ? await sha256Hex(t.parent) : null,
      })),
    ),
  };
}

async function supabaseUser(sessions: unknown[]) {
  const { bundle, id } = await nhostUser({ refreshTokens: [], supabaseSessions: sessions }, hash);
  const answer = await importUsers(svc, [bundle]);
  expect(answer.results[0]).toMatchObject({ outcome: "imported" });
  return { bundle, id };
}

const refresh = (token: string) => supabaseClient(svc).auth.refreshSession({ refresh_token: token });

describe("GoTrue sessions imported from Supabase", () => {
  // Threat: the move signs everyone out (the contract's "nobody signed out"), or a refreshed session is another one
  // (the app's session_id-keyed data, "sign out others" from the old session, would no longer match).
  it("a v1 token refreshes through supabase-js as the same user and session, then rotates single-use", async () => {
    const token = v1Token();
    const session = await v1Session([{ id: 41, token, revoked: false }]);
    const { id } = await supabaseUser([session]);
    const { data, error } = await refresh(token);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(id);
    expect(decodeJwt(data.session!.access_token)).toMatchObject({ sub: id, session_id: session.id });
    // Its successor is a token of the service's own family, and refreshes on.
    const next = await refresh(data.session!.refresh_token);
    expect(next.error).toBeNull();
    expect(decodeJwt(next.data.session!.access_token).session_id).toBe(session.id);
  });

  // Threat: a copy of the old token (a leaked backup of auth.refresh_tokens, a stolen device) used after the owner's
  // client rotated it: the face's replay rule ends the whole family, the owner's new token included.
  it("the imported token replayed after its rotation is refused and ends the family", async () => {
    const token = v1Token();
    await supabaseUser([await v1Session([{ id: 7, token, revoked: false }])]);
    const first = await refresh(token);
    expect(first.error).toBeNull();
    const replay = await refresh(token);
    expect(replay.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    const owner = await refresh(first.data.session!.refresh_token);
    expect(owner.error).toMatchObject({ status: 400 });
  });

  // Threat: GoTrue's rotated-out tokens (revoked, or older than the session's newest) are still in auth.refresh_tokens
  // in plain text; carrying them would let any old copy sign in again.
  it("a revoked or non-newest v1 token is refused; only the newest unrevoked one refreshes", async () => {
    const revoked = { id: 3, token: v1Token(), revoked: true };
    const older = { id: 5, token: v1Token(), revoked: false };
    const newest = { id: 12, token: v1Token(), revoked: false };
    const { id } = await supabaseUser([await v1Session([revoked, newest, older])]);
    expect((await refresh(revoked.token)).error).toMatchObject({
      status: 400,
      code: "refresh_token_not_found",
    });
    expect((await refresh(older.token)).error).toMatchObject({
      status: 400,
      code: "refresh_token_not_found",
    });
    const { data, error } = await refresh(newest.token);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(id);
  });

  // Threat as for v1: a session GoTrue moved to v2 tokens must not sign out.
  it("a v2 token (HMAC key and counter) refreshes as the same user and session", async () => {
    const now = Date.now();
    const { id } = await supabaseUser([
      {
        id: V2.session,
        createdAt: iso(now - 3 * DAY),
        refreshedAt: iso(now - DAY),
        notAfter: iso(now + 20 * DAY),
        aal: "aal1",
        refreshTokenHmacKey: V2.key,
        refreshTokenCounter: V2.counter,
        refreshTokens: [],
      },
    ]);
    const { data, error } = await refresh(V2.token);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(id);
    expect(decodeJwt(data.session!.access_token)).toMatchObject({ sub: id, session_id: V2.session });
    // The counter before, once the live token moved the session here, is a replay.
    expect((await refresh(V2.previous)).error).toMatchObject({ status: 400 });
  });

  // Loss closed (issue 44): a client whose last refresh at Supabase reached GoTrue but whose answer was lost (the
  // cut-over between) holds the token before: the live v1 token's parent, or the v2 counter before. GoTrue takes it
  // at any time (internal/tokens/service.go: the parent answered with the live token; counter - 1,
  // "likelyNotSavedByClient"), so the client stayed signed in there and must here. Threat kept out: the allowance
  // outliving its use. It moves the session here once; then it (after the grace window, 0 here), or the live token it
  // stood for, is a replay that ends the family, as GoTrue ends it for a token beyond its reuse rules.
  it("the token before the live one (v1 parent, v2 counter - 1) refreshes once; then it or the live token ends the family", async () => {
    const now = Date.now();
    const parent = v1Token();
    const live = v1Token();
    const v1 = await v1Session([{ id: 9, token: live, revoked: false, parent }]);
    const v2 = {
      id: V2B.session,
      createdAt: iso(now - 3 * DAY),
      refreshedAt: iso(now - DAY),
      refreshTokenHmacKey: V2.key,
      refreshTokenCounter: V2.counter,
      refreshTokens: [],
    };
    const { id } = await supabaseUser([v1, v2]);
    for (const [retry, current, session] of [
      [parent, live, v1.id],
      [V2B.previous, V2B.token, V2B.session],
    ] as const) {
      const { data, error } = await refresh(retry);
      expect(error).toBeNull();
      expect(decodeJwt(data.session!.access_token)).toMatchObject({ sub: id, session_id: session });
      expect((await refresh(current)).error).toMatchObject({ status: 400 });
      // The family ended: the successor the retry got is refused too.
      expect((await refresh(data.session!.refresh_token)).error).toMatchObject({ status: 400 });
    }
  });

  // Loss closed (issue 44), the usual way in: the last delta run finds the session rotated at Supabase since (its
  // live token then is the earlier run's live token's child), and the client lost that last answer. The earlier live
  // token, the new one's parent, must be taken again; the token before it must not come back.
  it("after a delta run, the earlier run's live token (now the parent) refreshes once; the one before is dead", async () => {
    const [first, second, third] = [v1Token(), v1Token(), v1Token()];
    const id = crypto.randomUUID();
    const run1 = await v1Session([{ id: 1, token: second, revoked: false, parent: first }], id);
    const { bundle } = await supabaseUser([run1]);
    const run2 = await v1Session(
      [
        { id: 1, token: second, revoked: true, parent: first },
        { id: 2, token: third, revoked: false, parent: second },
      ],
      id,
    );
    expect((await importUsers(svc, [{ ...bundle, supabaseSessions: [run2] }])).results[0]!.outcome).toBe(
      "updated",
    );
    expect((await refresh(first)).error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    const { data, error } = await refresh(second);
    expect(error).toBeNull();
    expect(decodeJwt(data.session!.access_token)).toMatchObject({ session_id: id });
  });

  // Threat: the delta run just before the cut-over brings back a token spent or signed out here (the ledger's
  // tombstone is what keeps it dead), so a thief's old copy works again.
  it("a delta run does not bring back a token spent here, nor a session signed out here", async () => {
    const spent = v1Token();
    const signedOut = v1Token();
    const spentSession = await v1Session([{ id: 1, token: spent, revoked: false }]);
    const outSession = await v1Session([{ id: 2, token: signedOut, revoked: false }]);
    const { bundle } = await supabaseUser([spentSession, outSession]);
    expect((await refresh(spent)).error).toBeNull();
    const other = await refresh(signedOut);
    expect(other.error).toBeNull();
    const client = supabaseClient(svc);
    await client.auth.setSession(other.data.session!);
    expect((await client.auth.signOut({ scope: "local" })).error).toBeNull();

    const again = await importUsers(svc, [bundle]);
    expect(again.results[0]!.outcome).not.toBe("skipped");
    expect((await refresh(spent)).error).toMatchObject({ status: 400 });
    expect((await refresh(signedOut)).error).toMatchObject({ status: 400 });
  });

  // Threat: a session that never showed the user's second factor (GoTrue's aal1) must not come out of the move with
  // the Hasura claims a session gets only after it (the face's rule for its own aal1 sessions).
  it("for a user with TOTP, an aal1 session refreshes without Hasura claims; an aal2 one with them", async () => {
    const aal1 = { token: v1Token(), session: crypto.randomUUID() };
    const aal2 = { token: v1Token(), session: crypto.randomUUID() };
    const sessions = [
      { ...(await v1Session([{ id: 1, token: aal1.token, revoked: false }], aal1.session)), aal: "aal1" },
      { ...(await v1Session([{ id: 2, token: aal2.token, revoked: false }], aal2.session)), aal: "aal2" },
    ];
    const totpSecret = base32(crypto.getRandomValues(new Uint8Array(20)));
    const { bundle } = await nhostUser(
      { refreshTokens: [], supabaseSessions: sessions, activeMfaType: "totp", totpSecret },
      hash,
    );
    expect((await importUsers(svc, [bundle])).results[0]).toMatchObject({ outcome: "imported" });
    const pending = await refresh(aal1.token);
    expect(pending.error).toBeNull();
    const pendingClaims = decodeJwt(pending.data.session!.access_token);
    expect(pendingClaims).toMatchObject({ aal: "aal1", session_id: aal1.session });
    expect(pendingClaims["https://hasura.io/jwt/claims"]).toBeUndefined();
    const shown = await refresh(aal2.token);
    expect(shown.error).toBeNull();
    expect(decodeJwt(shown.data.session!.access_token)["https://hasura.io/jwt/claims"]).toBeDefined();
  });

  // Loss closed (issue 44): a user who had shown their second factor at Supabase (an `aal2` session, its amr claim
  // `totp` in auth.mfa_amr_claims) was carried at `aal1`, so the app asked for the code again and an RLS policy
  // requiring `aal2` denied them. Threat kept out: a session that never showed it (only `password` in its amr, though
  // its `aal` column says otherwise) must not come out `aal2`: GoTrue itself derives aal from the amr rows.
  it("an aal2 session with a totp amr claim refreshes at aal2 with that amr, and is a TOTP session on Nhost's face", async () => {
    const now = Date.now();
    const stepped = { token: v1Token(), session: crypto.randomUUID() };
    const claimed = { token: v1Token(), session: crypto.randomUUID() };
    const totpAt = Math.floor((now - 2 * 3_600_000) / 1000);
    const amr = [
      { method: "totp", at: iso(totpAt * 1000) },
      { method: "password", at: iso(now - 3 * 3_600_000) },
    ];
    const sessions = [
      {
        ...(await v1Session([{ id: 1, token: stepped.token, revoked: false }], stepped.session)),
        aal: "aal2",
        amr,
      },
      {
        ...(await v1Session([{ id: 3, token: claimed.token, revoked: false }], claimed.session)),
        aal: "aal2",
        amr: [{ method: "password", at: iso(now - 3_600_000) }],
      },
    ];
    const totpSecret = base32(crypto.getRandomValues(new Uint8Array(20)));
    const { bundle } = await nhostUser(
      { refreshTokens: [], supabaseSessions: sessions, activeMfaType: "totp", totpSecret },
      hash,
    );
    expect((await importUsers(svc, [bundle])).results[0]).toMatchObject({ outcome: "imported" });

    const shown = await refresh(stepped.token);
    expect(shown.error).toBeNull();
    const claims = decodeJwt(shown.data.session!.access_token);
    expect(claims).toMatchObject({ aal: "aal2", session_id: stepped.session });
    expect(claims.amr).toEqual([{ method: "totp", timestamp: totpAt }]);
    expect(claims["https://hasura.io/jwt/claims"]).toBeDefined();
    // Still aal2 after the rotation into the service's own family.
    const next = await refresh(shown.data.session!.refresh_token);
    expect(decodeJwt(next.data.session!.access_token)).toMatchObject({ aal: "aal2" });

    // The Nhost face (which takes the service's own tokens, not GoTrue's): the session refreshes there (a pending
    // one would not) and is listed as begun by the authenticator app (`mfa-totp`), as a TOTP sign-in's.
    const nhost = await svc.post("/token", { refreshToken: next.data.session!.refresh_token });
    expect(nhost.status, await nhost.clone().text()).toBe(200);
    const { accessToken } = (await nhost.json()) as { accessToken: string };
    const listed = await svc.get("/user/sessions", accessToken);
    expect(listed.status).toBe(200);
    const { items: mine } = (await listed.json()) as { items: { id: string; method: string }[] };
    expect(mine.find((s) => s.id === stepped.session)).toMatchObject({ method: "mfa-totp" });

    const notShown = await refresh(claimed.token);
    expect(notShown.error).toBeNull();
    expect(decodeJwt(notShown.data.session!.access_token)).toMatchObject({ aal: "aal1" });
    expect(decodeJwt(notShown.data.session!.access_token)["https://hasura.io/jwt/claims"]).toBeUndefined();
  });

  // Loss closed (issue 44): a session stepped up at Supabase between two runs (GoTrue's mfa verify rotates its token
  // and adds a `totp` amr row) stayed pending here after the delta run, its user asked for the code again.
  it("a delta run carries a step-up done at Supabase since to a session not yet used here", async () => {
    const now = Date.now();
    const session = crypto.randomUUID();
    const before = v1Token();
    const after = v1Token();
    const password = { method: "password", at: iso(now - 3 * 3_600_000) };
    const signedIn = {
      ...(await v1Session([{ id: 1, token: before, revoked: false }], session)),
      aal: "aal1",
      amr: [password],
    };
    const totpSecret = base32(crypto.getRandomValues(new Uint8Array(20)));
    const { bundle } = await nhostUser(
      { refreshTokens: [], supabaseSessions: [signedIn], activeMfaType: "totp", totpSecret },
      hash,
    );
    expect((await importUsers(svc, [bundle])).results[0]).toMatchObject({ outcome: "imported" });
    const totpAt = Math.floor((now - 3_600_000) / 1000);
    const stepped = {
      ...(await v1Session(
        [
          { id: 1, token: before, revoked: true },
          { id: 2, token: after, revoked: false },
        ],
        session,
      )),
      aal: "aal2",
      amr: [{ method: "totp", at: iso(totpAt * 1000) }, password],
    };
    const again = await importUsers(svc, [{ ...bundle, supabaseSessions: [stepped] }]);
    expect(again.results[0]!.outcome).not.toBe("skipped");
    expect((await refresh(before)).error).toMatchObject({ status: 400 });
    const { data, error } = await refresh(after);
    expect(error).toBeNull();
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({
      aal: "aal2",
      session_id: session,
      amr: [{ method: "totp", timestamp: totpAt }],
    });
    expect(claims["https://hasura.io/jwt/claims"]).toBeDefined();
  });

  // Threat (issue 44): a session carried at aal2 by a phone or WebAuthn step (method `mfa-sms`, `mfa-webauthn`)
  // escaping an org's enforced SSO, which ends the sessions its domain's users began without the IdP (sso-sweep.ts).
  it("a session stepped up by phone or WebAuthn at Supabase is ended when its org enforces SSO", async () => {
    const domain = `corp-${crypto.randomUUID().slice(0, 8)}.test`;
    const orgId = crypto.randomUUID();
    const org = {
      id: orgId,
      name: domain,
      domains: [domain],
      saml: { metadataXml: idpMetadataXml() },
      enabled: true,
    };
    const orgs = await svc.request("POST", "/admin/import/nhost/orgs", {
      json: { orgs: [org] },
      headers: admin(),
    });
    expect(orgs.status).toBe(200);
    const tokens = [v1Token(), v1Token()];
    const sessions = await Promise.all(
      ["mfa/phone", "mfa/webauthn"].map(async (method, i) => ({
        ...(await v1Session([{ id: i + 1, token: tokens[i]!, revoked: false }])),
        aal: "aal2",
        amr: [{ method, at: iso(Date.now() - 60_000) }],
      })),
    );
    const { bundle } = await nhostUser(
      { refreshTokens: [], supabaseSessions: sessions, email: `jo@${domain}` },
      hash,
    );
    expect((await importUsers(svc, [bundle])).results[0]).toMatchObject({ outcome: "imported" });
    const enforced = await svc.request("PATCH", `/admin/orgs/${orgId}/sso`, {
      json: { enforce: true },
      headers: admin(),
    });
    expect(enforced.status, await enforced.clone().text()).toBe(200);
    for (const token of tokens) expect((await refresh(token)).error).toMatchObject({ status: 400 });
  });

  // Threat: a hostile or broken row (a key that is not base64url) must be a report line, never a 500 or half a user.
  it("an unreadable HMAC key skips the user with the session named", async () => {
    const { bundle } = await nhostUser(
      {
        refreshTokens: [],
        supabaseSessions: [
          {
            id: crypto.randomUUID(),
            createdAt: iso(Date.now() - DAY),
            refreshTokenHmacKey: "A".repeat(25),
            refreshTokenCounter: 1,
          },
        ],
      },
      hash,
    );
    const answer = await importUsers(svc, [bundle]);
    expect(answer.results[0]).toMatchObject({ outcome: "skipped" });
    expect(JSON.stringify(answer.results[0]!.reasons)).toContain("refresh_token_hmac_key");
  });
});
