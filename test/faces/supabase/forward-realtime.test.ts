import { createClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, inject, it, vi } from "vitest";
import { UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../../fakes/supabase-upstream";
import { uniqueEmail } from "../../helpers";
import { FACE, fetchThrough, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * Realtime's socket forwarded (contract supabase.md §4), against a Phoenix socket on loopback
 * (test/fakes/supabase-upstream.ts) that answers each `phx_join` with the claims of its `access_token`, checked under
 * the project's secret, and each `access_token` message with a `token_seen` push. The frames are Phoenix's, as
 * realtime-js sends them (serializer 2.0.0, arrays; 1.0.0, objects).
 */

const UPSTREAM = inject("upstreamUrl");

const svc = supabaseService({
  OUTBOUND: undefined,
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
  AUTH_SUPABASE_UPSTREAM_URL: UPSTREAM,
  AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
  AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
});

/** What the fake's answers carry: claims it verified, a reply's status, a broadcast's event. */
interface Said {
  status: string;
  event: string;
  sub: string;
  exp: number;
  iat: number;
  token: string;
  response: Said;
  payload: Said;
  [claim: string]: unknown;
}

/** A frame of Phoenix's serializer 2.0.0: `[join_ref, ref, topic, event, payload]`. */
type Frame = [string | null, string | null, string, string, Said];

/** A socket to the face, opened as realtime-js opens it (the key in the URL), with its frames read in order. */
async function open(apikey = PUBLISHABLE_KEY, vsn = "2.0.0", through = svc) {
  const response = await through.request(
    "GET",
    `${FACE}/realtime/v1/websocket?apikey=${encodeURIComponent(apikey)}&vsn=${vsn}`,
    { headers: { upgrade: "websocket" } },
  );
  const socket = response.webSocket;
  if (response.status !== 101 || !socket) return { response, socket: null, next: null };
  socket.accept();
  const frames: unknown[] = [];
  const waiting: ((frame: unknown) => void)[] = [];
  socket.addEventListener("message", (event) => {
    const frame = JSON.parse(event.data as string);
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else frames.push(frame);
  });
  const next = () =>
    frames.length > 0
      ? Promise.resolve(frames.shift())
      : new Promise<unknown>((resolve) => waiting.push(resolve));
  return { response, socket, next };
}

/**
 * realtime-js's transport (its `transport` option: a WebSocket constructor) over the Worker under test: the socket is
 * opened by the Worker's own fetch handler, with `Upgrade: websocket`, as the network would open it.
 */
class ThroughWorker {
  readyState = 0;
  binaryType = "arraybuffer";
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((error: unknown) => void) | null = null;
  private socket: WebSocket | null = null;

  constructor(readonly url: string) {
    svc
      .request("GET", url.replace(/^ws/, "http"), { headers: { upgrade: "websocket" } })
      .then((response) => {
        const socket = response.webSocket!;
        socket.accept();
        this.socket = socket;
        socket.addEventListener("message", (event) => this.onmessage?.({ data: event.data }));
        socket.addEventListener("close", (event) => {
          this.readyState = 3;
          this.onclose?.({ code: event.code, reason: event.reason });
        });
        this.readyState = 1;
        this.onopen?.();
      })
      .catch((error) => this.onerror?.(error));
  }

  send(data: string | ArrayBuffer) {
    this.socket?.send(data);
  }

  close(code = 1000, reason = "") {
    this.readyState = 3;
    this.socket?.close(code, reason);
  }
}

async function signedIn() {
  const supabase = supabaseClient(svc);
  const { data } = await supabase.auth.signUp({
    email: uniqueEmail("rt"),
    password: "correct horse battery",
  });
  return { supabase, session: data.session! };
}

describe("Realtime forwarded", () => {
  it("realtime-js: channel(…).subscribe() as the signed-in user; a new session's token (setAuth) re-signed", async () => {
    const supabase = createClient(FACE, PUBLISHABLE_KEY, {
      global: { fetch: fetchThrough(svc) },
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: ThroughWorker as never },
    });
    const email = uniqueEmail("rtjs");
    const { data } = await supabase.auth.signUp({ email, password: "correct horse battery" });
    const sub = data.user!.id;
    const channel = supabase.channel("room-1");
    const joined = new Promise<Record<string, unknown>>((resolve) =>
      channel.on("broadcast", { event: "joined_as" }, ({ payload }) => resolve(payload)),
    );
    const reSigned = new Promise<Record<string, unknown>>((resolve) =>
      channel.on("broadcast", { event: "token_seen" }, ({ payload }) => resolve(payload)),
    );
    channel.subscribe();
    const first = await joined;
    expect(first).toMatchObject({
      sub,
      role: "authenticated",
      session_id: decodeJwt(data.session!.access_token).session_id,
    });
    // A new session (signInWithPassword): supabase-js hands its token to realtime-js (setAuth), which sends it on the
    // channel as an `access_token` message.
    const again = await supabase.auth.signInWithPassword({ email, password: "correct horse battery" });
    expect(again.error).toBeNull();
    const second = await reSigned;
    // Verified under the project's secret (the fake says `refused` otherwise): the new token was exchanged, not passed.
    expect(second).toMatchObject({
      sub,
      role: "authenticated",
      session_id: decodeJwt(again.data.session!.access_token).session_id,
    });
    expect(second.token).not.toBe(again.data.session!.access_token);
    await supabase.removeAllChannels();
    supabase.realtime.disconnect();
  });

  it("channel(…).subscribe(): phx_join's access_token exchanged, access_token messages re-signed, frames echoed", async () => {
    const { session } = await signedIn();
    const { socket, next } = await open();
    const sub = decodeJwt(session.access_token).sub;
    socket!.send(
      JSON.stringify([
        "1",
        "1",
        "realtime:room",
        "phx_join",
        { config: {}, access_token: session.access_token },
      ]),
    );
    const [joinRef, ref, topic, event, payload] = (await next!()) as Frame;
    expect([joinRef, ref, topic, event, payload.status]).toEqual([
      "1",
      "1",
      "realtime:room",
      "phx_reply",
      "ok",
    ]);
    // The upstream verified a token of the project's secret, for the same person, and never saw the face's token.
    expect(payload.response).toMatchObject({ sub, role: "authenticated", aud: "authenticated" });
    expect(payload.response.token).not.toBe(session.access_token);
    expect(payload.response.exp - payload.response.iat).toBeLessThanOrEqual(300);
    expect(((await next!()) as Frame)[4].event).toBe("joined_as");

    socket!.send(
      JSON.stringify(["1", "2", "realtime:room", "access_token", { access_token: session.access_token }]),
    );
    const seen = ((await next!()) as Frame)[4];
    expect(seen.event).toBe("token_seen");
    expect(seen.payload).toMatchObject({ sub, role: "authenticated" });
    expect(seen.payload.token).not.toBe(session.access_token);

    socket!.send(
      JSON.stringify([
        "1",
        "3",
        "realtime:room",
        "broadcast",
        { type: "broadcast", event: "hi", payload: { n: 1 } },
      ]),
    );
    expect(await next!()).toEqual([
      "1",
      "3",
      "realtime:room",
      "broadcast",
      { type: "broadcast", event: "hi", payload: { n: 1 } },
    ]);
    socket!.close(1000);
  });

  it("the key in the URL becomes the project's; with no user token the channel is anon, or service_role by a secret key", async () => {
    const { socket, next } = await open(PUBLISHABLE_KEY, "1.0.0");
    socket!.send(
      JSON.stringify({
        topic: "realtime:public",
        event: "phx_join",
        payload: { config: {}, access_token: PUBLISHABLE_KEY },
        ref: "1",
        join_ref: "1",
      }),
    );
    const reply = (await next!()) as {
      event: string;
      payload: { status: string; response: Record<string, unknown> };
    };
    expect(reply.event).toBe("phx_reply");
    expect(reply.payload.response).toMatchObject({ role: "anon" });
    await next!();
    socket!.close(1000);

    const admin = await open(SECRET_KEY);
    admin.socket!.send(
      JSON.stringify(["1", "1", "realtime:all", "phx_join", { config: {}, access_token: SECRET_KEY }]),
    );
    expect(((await admin.next!()) as Frame)[4].response).toMatchObject({ role: "service_role" });
    admin.socket!.close(1000);
  });

  it("a channel's token is re-signed before it expires while the session lives, and left once it has ended", async () => {
    const { supabase, session } = await signedIn();
    // The socket's clock (Date, nothing else) is the test's from its opening on.
    vi.useFakeTimers({ toFake: ["Date"] });
    const { socket, next } = await open();
    try {
      socket!.send(
        JSON.stringify([
          "1",
          "1",
          "realtime:long",
          "phx_join",
          { config: {}, access_token: session.access_token },
        ]),
      );
      const first = ((await next!()) as Frame)[4].response;
      await next!(); // joined_as
      // Four minutes on, the upstream token has less than 90 s left: the next heartbeat brings a fresh one.
      vi.setSystemTime(Date.now() + 240_000);
      socket!.send(JSON.stringify([null, "2", "phoenix", "heartbeat", {}]));
      expect(((await next!()) as Frame)[3]).toBe("phx_reply");
      const fresh = ((await next!()) as Frame)[4];
      expect(fresh.event).toBe("token_seen");
      expect(fresh.payload).toMatchObject({ sub: first.sub, role: "authenticated" });
      expect(fresh.payload.exp).toBeGreaterThan(first.exp);

      // Threat: a signed-out session kept on the project's channels by the forwarder's own re-signing.
      await supabase.auth.signOut();
      vi.setSystemTime(Date.now() + 240_000);
      socket!.send(JSON.stringify([null, "3", "phoenix", "heartbeat", {}]));
      // In whatever order they come: the heartbeat's reply, the refusal on the channel, and the channel left upstream
      // (the fake echoes the phx_leave the forwarder sent).
      const frames = [(await next!()) as Frame, (await next!()) as Frame, (await next!()) as Frame];
      const shapes = frames.map((frame) => [frame[2], frame[3], frame[4].status ?? null]);
      expect(shapes).toEqual(
        expect.arrayContaining([
          ["phoenix", "phx_reply", "ok"],
          ["realtime:long", "phx_reply", "error"],
          ["realtime:long", "phx_leave", null],
        ]),
      );
    } finally {
      vi.useRealTimers();
      socket!.close(1000);
    }
  });

  it("without the project's anon key, the URL's key is an anon token of its secret; the upstream's refusal passes", async () => {
    const settings = {
      OUTBOUND: undefined,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
    };
    const keyless = supabaseService({ ...settings, AUTH_SUPABASE_UPSTREAM_URL: UPSTREAM });
    const { socket, next } = await open(PUBLISHABLE_KEY, "2.0.0", keyless);
    socket!.send(
      JSON.stringify(["1", "1", "realtime:open", "phx_join", { config: {}, access_token: PUBLISHABLE_KEY }]),
    );
    expect(((await next!()) as Frame)[4]).toMatchObject({ status: "ok", response: { role: "anon" } });
    socket!.close(1000);
    // The project refusing the socket (here: no Realtime at that path) answers its own 401, not a socket.
    const elsewhere = supabaseService({ ...settings, AUTH_SUPABASE_UPSTREAM_URL: `${UPSTREAM}/nothing` });
    const refused = await open(PUBLISHABLE_KEY, "2.0.0", elsewhere);
    expect(refused.response.status).toBe(401);
    expect(refused.socket).toBeNull();
  });

  it("a socket asking for more than 500 token exchanges a minute is closed (1008)", async () => {
    // Threat: one upgrade turned into an unmetered stream of session reads and signatures.
    const { socket } = await open();
    const closed = new Promise<number>((resolve) =>
      socket!.addEventListener("close", (event) => resolve(event.code)),
    );
    for (let i = 0; i <= 500; i++) {
      socket!.send(
        JSON.stringify([
          String(i),
          String(i),
          `realtime:t${i}`,
          "phx_join",
          { access_token: PUBLISHABLE_KEY },
        ]),
      );
    }
    expect(await closed).toBe(1008);
  });

  it("refused: a wrong key before the upgrade, a dead session's token on its channel", async () => {
    // Threat: a socket opened upstream under the project's key by anyone who asks.
    const wrong = await open("sb_publishable_wrongwrongwrongwrong");
    expect(wrong.response.status).toBe(401);

    // Threat: a signed-out session still listening (and its token re-signed) on the project's channels.
    const { supabase, session } = await signedIn();
    await supabase.auth.signOut();
    const { socket, next } = await open();
    socket!.send(
      JSON.stringify([
        "1",
        "1",
        "realtime:room",
        "phx_join",
        { config: {}, access_token: session.access_token },
      ]),
    );
    const [, , , event, payload] = (await next!()) as Frame;
    expect(event).toBe("phx_reply");
    expect(payload).toMatchObject({ status: "error", response: { reason: expect.any(String) } });
    socket!.close(1000);
  });
});
