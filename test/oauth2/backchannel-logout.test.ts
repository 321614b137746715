// Back-Channel Logout 1.0 (contract §12): when a session of the service ends, every client holding a grant from that
// session gets a logout token, through the real path: the D1 trigger's `session.revoked`, the EVENTS queue, the
// fan-out, the LOGOUT_DELIVERIES queue and its consumer, posting to receivers of test/fakes/outbound.js
// (`https://webhooks.fake/…`, as the webhook tests do). Each token is verified here with jose against the server's JWKS,
// as an RP would. Threats: a forged or replayed logout token passed off as ours (typ, iss, aud, jti, no nonce), a
// refresh token outliving the logout (online grants end with the session), a notice lost to a receiver that was down
// (retries), a notice posted to a URL the outbound policy refuses (SSRF), and a notice to clients of another session
// or another user (telling them someone signed out who did not).
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { QUEUES } from "../../src/events/queues";
import type { StreamEvent } from "../../src/events/types";
import type { WireClient } from "../../src/oauth2/clients";
import { backchannelLogoutFanOut, deliverLogoutTokens } from "../../src/oauth2/logout";
import { getConfig } from "../../src/runtime/config";
import { handleQueueBatch } from "../../src/runtime/consumers";
import { decodeJwt, signUp, type WireSession } from "../helpers";
import { testShards } from "../support/shards";
import { eventually, planAnswers, received, receiverUrl } from "../webhooks/support";
import { sessionExists, signedIn, signInThrough, visit } from "./logout-support";
import { codeFor, exchange, ISSUER, newClient, postForm, provider, type TokenAnswer } from "./support";

const svc = provider();
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const EVENT = "http://schemas.openid.net/event/backchannel-logout";

/** A client that listens for logout tokens at a receiver of its own. */
async function listeningClient(): Promise<{ client: WireClient; receiver: string }> {
  const receiver = receiverUrl("logout");
  const client = await newClient(svc, {
    backchannelLogoutUri: receiver,
    backchannelLogoutSessionRequired: true,
  });
  return { client, receiver };
}

/** A grant of `client` from `session` (the JSON login step with the session's access token: `sid` is the session). */
async function grantFrom(client: WireClient, session: WireSession, scope = "openid"): Promise<TokenAnswer> {
  const { code } = await codeFor(svc, client, session, { scope });
  const response = await exchange(svc, client, code);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenAnswer;
}

/** The claims of every logout token posted to `receiver` once `count` came, each verified as an RP verifies it. */
async function logoutTokensAt(receiver: string, count: number): Promise<JWTPayload[]> {
  const posts = await eventually(
    () => received(receiver),
    (found) => found.length >= count,
  );
  expect(posts).toHaveLength(count);
  const keys = createLocalJWKSet(await (await svc.get("/oauth2/jwks")).json());
  const tokens: JWTPayload[] = [];
  for (const post of posts) {
    // §2.5: a form POST with the one parameter logout_token.
    expect(post.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const body = new URLSearchParams(post.body);
    expect([...body.keys()]).toEqual(["logout_token"]);
    const token = body.get("logout_token")!;
    // §2.6: our key, the ID tokens' algorithm, our issuer, the explicit type; unexpired.
    const { payload } = await jwtVerify(token, keys, {
      issuer: ISSUER,
      typ: "logout+jwt",
      algorithms: ["RS256"],
    });
    expect(decodeProtectedHeader(token).kid).toBeTruthy();
    // §2.4: events holds exactly the back-channel event, an empty object; a jti; never a nonce.
    expect(payload.events).toEqual({ [EVENT]: {} });
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload).not.toHaveProperty("nonce");
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(120);
    tokens.push(payload);
  }
  return tokens;
}

function refresh(client: WireClient, refreshToken: string): Promise<Response> {
  return postForm(
    svc,
    "/oauth2/token",
    { grant_type: "refresh_token", refresh_token: refreshToken },
    { authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}` },
  );
}

// Each test waits for two queues (and their retries): the pool's default 5 s is too short on a busy machine.
describe("back-channel logout, end to end", { timeout: 30_000 }, () => {
  it("/signout tells every client of that session with a token an RP verifies; online grants end, offline ones stay", async () => {
    const session = await signUp(svc);
    const first = await listeningClient();
    const second = await listeningClient();
    const online = await grantFrom(first.client, session, "openid");
    const offline = await grantFrom(second.client, session, "openid offline_access");
    const sid = decodeJwt(online.id_token!).payload.sid;
    expect(sid).toBe(session.refreshTokenId);

    expect((await svc.post("/signout", { refreshToken: session.refreshToken })).status).toBe(200);
    for (const { client, receiver } of [first, second]) {
      const [claims] = await logoutTokensAt(receiver, 1);
      expect(claims).toMatchObject({ aud: client.clientId, sub: session.user.id, sid });
    }
    // The grant without offline_access ends with the session (its refresh token with it); the offline one stays.
    const ended = await eventually(
      () => refresh(first.client, online.refresh_token!),
      (response) => response.status === 400,
    );
    expect(((await ended.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await refresh(second.client, offline.refresh_token!)).status).toBe(200);
  });

  it("signing out everywhere tells the clients of each session, each token naming its own session", async () => {
    const session = await signUp(svc);
    const other = (await (
      await svc.post("/signin/email-password", {
        email: session.user.email,
        password: "correct horse battery",
      })
    ).json()) as { session: WireSession };
    const { client, receiver } = await listeningClient();
    await grantFrom(client, session);
    await grantFrom(client, other.session);
    const all = await svc.request("POST", "/signout", { json: { all: true }, token: session.accessToken });
    expect(all.status).toBe(200);
    const tokens = await logoutTokensAt(receiver, 2);
    expect(tokens.map((claims) => claims.sid).sort()).toEqual(
      [session.refreshTokenId, other.session.refreshTokenId].sort(),
    );
    // Each notice is a token of its own (§2.6: an RP refuses a jti it saw).
    expect(new Set(tokens.map((claims) => claims.jti)).size).toBe(2);
  });

  it("an admin ending the session through the admin API tells its clients", async () => {
    const session = await signUp(svc);
    const { client, receiver } = await listeningClient();
    await grantFrom(client, session);
    const revoked = await svc.request("DELETE", `/admin/sessions/${session.refreshTokenId}`, {
      headers: ADMIN,
    });
    expect(revoked.status).toBe(204);
    const [claims] = await logoutTokensAt(receiver, 1);
    expect(claims).toMatchObject({ aud: client.clientId, sub: session.user.id, sid: session.refreshTokenId });
  });

  // The request ends the user's grants right after their sessions, before the event is read: the event itself names
  // the clients that held a grant from the session (migration 0024), so none of them keeps a signed-out user.
  it("a password change signs out the other sessions and tells their clients, though their grants ended with it", async () => {
    const session = await signUp(svc);
    const other = (await (
      await svc.post("/signin/email-password", {
        email: session.user.email,
        password: "correct horse battery",
      })
    ).json()) as { session: WireSession };
    const { client, receiver } = await listeningClient();
    const fromOther = await grantFrom(client, other.session, "openid offline_access");
    const changed = await svc.request("POST", "/user/password", {
      json: { newPassword: "a brand new passphrase" },
      token: session.accessToken,
    });
    expect(changed.status).toBe(200);
    const [claims] = await logoutTokensAt(receiver, 1);
    expect(claims).toMatchObject({
      aud: client.clientId,
      sub: session.user.id,
      sid: other.session.refreshTokenId,
    });
    // Every grant of the user ended with the new password, the offline one too (issue 13's rule), told or not.
    expect((await refresh(client, fromOther.refresh_token!)).status).toBe(400);
  });

  it("an admin disabling the user tells the clients of every session", async () => {
    const session = await signUp(svc);
    const { client, receiver } = await listeningClient();
    await grantFrom(client, session);
    const disabled = await svc.request("PATCH", `/admin/users/${session.user.id}`, {
      headers: ADMIN,
      json: { disabled: true },
    });
    expect(disabled.status).toBe(200);
    const [claims] = await logoutTokensAt(receiver, 1);
    expect(claims).toMatchObject({ aud: client.clientId, sub: session.user.id, sid: session.refreshTokenId });
  });

  it("RP-initiated logout tells every client of the browser session, the one that asked too", async () => {
    const asking = await listeningClient();
    const alsoSignedIn = await listeningClient();
    const who = await signedIn(svc, asking.client);
    // The same person in the same browser signs in to a second client: the same browser session.
    const second = await signInThrough(svc, alsoSignedIn.client, who.browser, who.email);
    expect(second.sid).toBe(who.sid);
    expect((await visit(who, `/oauth2/logout?id_token_hint=${who.idToken}`)).status).toBe(200);
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
    for (const { client, receiver } of [asking, alsoSignedIn]) {
      const [claims] = await logoutTokensAt(receiver, 1);
      expect(claims).toMatchObject({ aud: client.clientId, sub: who.userId, sid: who.sid });
    }
  });

  // A receiver that was down: the notice is not lost, and each attempt carries a fresh token (a short `exp`).
  it("a receiver failing twice then answering 200 gets the token on the third attempt", async () => {
    const session = await signUp(svc);
    const { client, receiver } = await listeningClient();
    await planAnswers(receiver, [500, 503]);
    await grantFrom(client, session);
    expect((await svc.post("/signout", { refreshToken: session.refreshToken })).status).toBe(200);
    const tokens = await logoutTokensAt(receiver, 3);
    expect((await received(receiver)).map((post) => post.answer)).toEqual([500, 503, "ok"]);
    expect(new Set(tokens.map((claims) => claims.jti)).size).toBe(3);
    expect(tokens.every((claims) => claims.sid === session.refreshTokenId)).toBe(true);
    // Retried at once (AUTH_EVENTS_RETRY_DELAY_SECONDS is 0 in the suite; the schedule: test/events/consume.test.ts).
  });
});

/** A `session.revoked` event as the trigger writes it (docs/events.md), for a session that did not end. */
function revokedEvent(userId: string, sessionId: string): StreamEvent {
  return {
    id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
    type: "session.revoked",
    timestamp: new Date().toISOString(),
    subject: userId,
    sequence: 1,
    data: { session: { id: sessionId, userId, method: "email-password" } },
  };
}

/** A queue that keeps what is sent to it. */
function recordingQueue() {
  const sent: unknown[] = [];
  const queue = {
    send: async (body: unknown) => void sent.push(body),
    sendBatch: async (messages: { body: unknown }[]) => void sent.push(...messages.map((m) => m.body)),
  } as unknown as Queue;
  return { sent, queue };
}

describe("back-channel logout, whom the fan-out tells", { timeout: 20_000 }, () => {
  // Telling a client that someone signed out who did not: only the grants of the ended session, of its user, count.
  it("tells only the listening clients of the ended session: not another session's, not another user's", async () => {
    const alice = await signUp(svc);
    const aliceElsewhere = (await (
      await svc.post("/signin/email-password", { email: alice.user.email, password: "correct horse battery" })
    ).json()) as { session: WireSession };
    const bob = await signUp(svc);
    const shared = await listeningClient();
    const aliceOther = await listeningClient();
    const silent = await newClient(svc);
    // offline_access: the fan-out leaves these grants in place, so each call below sees them all.
    await grantFrom(shared.client, alice, "openid offline_access");
    await grantFrom(silent, alice, "openid offline_access");
    await grantFrom(aliceOther.client, aliceElsewhere.session, "openid offline_access");
    await grantFrom(shared.client, bob, "openid offline_access");

    const { sent, queue } = recordingQueue();
    const fanOut = backchannelLogoutFanOut({ shards: testShards(), queue });
    await fanOut.consume(revokedEvent(alice.user.id, alice.refreshTokenId));
    expect(sent).toEqual([
      {
        kind: "backchannel-logout",
        clientId: shared.client.clientId,
        userId: alice.user.id,
        sid: alice.refreshTokenId,
      },
    ]);
    // Another session's id under this user, or this session's id under another user, finds nothing.
    await fanOut.consume(revokedEvent(bob.user.id, alice.refreshTokenId));
    await fanOut.consume({ ...revokedEvent(alice.user.id, alice.refreshTokenId), type: "session.created" });
    expect(sent).toHaveLength(1);
  });

  // Fault: LOGOUT_DELIVERIES refuses the messages. The event fails (the stream retries it with its backoff) and the
  // session's grants are still there for that retry to find: a notice is never lost to the grants going first.
  it("a queue that refuses the messages fails the event and leaves the grants for its retry", async () => {
    const session = await signUp(svc);
    const { client } = await listeningClient();
    const tokens = await grantFrom(client, session, "openid");
    const refusing = {
      sendBatch: async () => {
        throw new Error("Queue send failed: overloaded");
      },
    } as unknown as Queue;
    const fanOut = backchannelLogoutFanOut({ shards: testShards(), queue: refusing });
    await expect(fanOut.consume(revokedEvent(session.user.id, session.refreshTokenId))).rejects.toThrow(
      /overloaded/,
    );
    expect((await refresh(client, tokens.refresh_token!)).status).toBe(200);

    const { sent, queue } = recordingQueue();
    await backchannelLogoutFanOut({ shards: testShards(), queue }).consume(
      revokedEvent(session.user.id, session.refreshTokenId),
    );
    expect(sent).toHaveLength(1);
  });
});

describe("back-channel logout, the delivery", () => {
  async function deliver(body: unknown) {
    const posted: string[] = [];
    const batch = createMessageBatch<unknown>(QUEUES.logoutDeliveries, [
      { id: `m-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body },
    ]);
    const ctx = createExecutionContext();
    await deliverLogoutTokens(batch, {
      db: createDb(env.DB),
      config: getConfig({ ...env, AUTH_OAUTH2_PROVIDER_ENABLED: "true" }),
      outbound: async (input) => {
        posted.push(String(input instanceof Request ? input.url : input));
        return new Response("ok");
      },
      now: Date.now,
    });
    return { posted, result: await getQueueResult(batch, ctx) };
  }

  // SSRF: the URI is the client's say-so, checked again when the post goes out (a policy tightened since, a row
  // written around the admin API): a refused one is never fetched, and no retry would change that.
  it("never posts to a URI the outbound policy refuses, and does not retry it", async () => {
    const { client } = await listeningClient();
    for (const uri of [
      "http://webhooks.fake/plain-http",
      "https://127.0.0.1/logout",
      "http://localhost:8787/x",
    ]) {
      await env.DB.prepare("UPDATE oauth2_clients SET backchannel_logout_uri = ? WHERE client_id = ?")
        .bind(uri, client.clientId)
        .run();
      const { posted, result } = await deliver({
        kind: "backchannel-logout",
        clientId: client.clientId,
        userId: crypto.randomUUID(),
        sid: crypto.randomUUID(),
      });
      expect(posted).toEqual([]);
      expect(result.explicitAcks).toHaveLength(1);
      expect(result.retryMessages).toEqual([]);
    }
  });

  it("ends quietly for a client deleted or no longer listening, and for a message of another shape", async () => {
    const notice = { kind: "backchannel-logout", userId: crypto.randomUUID(), sid: crypto.randomUUID() };
    for (const body of [{ ...notice, clientId: "oc_gone" }, { deliveryId: "whd_x" }, "text"]) {
      const { posted, result } = await deliver(body);
      expect(posted).toEqual([]);
      expect(result.explicitAcks).toHaveLength(1);
    }
  });
});

// A notice out of retries (its receiver was down for days) is a dead letter: the console and the admin API list it
// as what it is and can send it back, rather than keeping it as a message of unknown shape nobody can act on.
describe("back-channel logout, dead letters", () => {
  it("a logout notice out of retries is listed as one and, sent again, reaches the client", {
    timeout: 30_000,
  }, async () => {
    const session = await signUp(svc);
    const { client, receiver } = await listeningClient();
    const notice = {
      kind: "backchannel-logout",
      clientId: client.clientId,
      userId: session.user.id,
      sid: session.refreshTokenId,
    };
    const letterId = `dl-${crypto.randomUUID()}`;
    const batch = createMessageBatch<unknown>(QUEUES.deadLetters, [
      { id: letterId, timestamp: new Date(), attempts: 17, body: notice },
    ]);
    const ctx = createExecutionContext();
    await handleQueueBatch(batch, env);
    await getQueueResult(batch, ctx);
    const listed = (await (
      await svc.request("GET", "/admin/events/dead-letters?limit=500", { headers: ADMIN })
    ).json()) as { items: { id: string; queue: string; summary: string }[] };
    expect(listed.items.find((item) => item.id === letterId)).toMatchObject({
      queue: "logoutDeliveries",
      summary: `back-channel logout of session ${session.refreshTokenId} to client ${client.clientId}`,
    });
    const again = await svc.request("POST", "/admin/events/dead-letters/redeliver", {
      headers: ADMIN,
      json: { ids: [letterId] },
    });
    expect(await again.json()).toEqual({ redelivered: 1 });
    const [claims] = await logoutTokensAt(receiver, 1);
    expect(claims).toMatchObject({ aud: client.clientId, sub: session.user.id, sid: session.refreshTokenId });
  });
});
