import type { Context } from "hono";
import type { AppEnv } from "../../../http/app-env";
import type { KeyRole } from "../api-keys";
import { GoTrueError } from "../gotrue";
import { callerOfToken, keyRole } from "./caller";
import { type UpstreamRole, upstreamToken } from "./exchange";
import { outgoingHeaders, upstreamUrl } from "./http";
import { cloudflareFailure, fetchUpstream, UpstreamFailed } from "./upstream-fetch";

/**
 * Realtime's socket forwarded (contract supabase.md §4). Realtime carries its credentials inside the socket: the key
 * in the URL, and a token in each channel's `phx_join` and in the `access_token` messages realtime-js sends when its
 * session refreshes. So this service ends the caller's socket and opens its own to the upstream, and rewrites those
 * three places: the key becomes the project's, each token is exchanged as an HTTP call's is (the session checked
 * alive each time). Every other frame passes as it is, both ways, binary ones too.
 *
 * An exchanged token lives five minutes, a channel for hours: Realtime closes a channel whose token has expired. So
 * while the caller's own token outlives it, the channel gets a fresh one before it expires, on the next frame the
 * caller sends (realtime-js's heartbeat comes every 25 s), after the session is checked again: a session that ends
 * loses its channels within minutes, as its HTTP calls lose the upstream at once.
 */

/** A fresh token is sent when the current one has less than this left (seconds): two heartbeats and some. */
const REFRESH_MARGIN_SECONDS = 90;

/**
 * Each exchange reads the session: a socket may ask this many a minute (a join and a new token for each of Realtime's
 * 100 channels a client may hold, twice over), and is closed past it, so one upgrade is no unmetered door to D1.
 */
const MAX_EXCHANGES_PER_MINUTE = 500;

class TooManyExchanges extends Error {
  constructor() {
    super("too many token exchanges on this socket");
  }
}

/** A Phoenix frame: an array `[join_ref, ref, topic, event, payload]` (serializer 2.0.0) or an object (1.0.0). */
interface Frame {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
  array: boolean;
}

function parseFrame(text: string): Frame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value) && value.length === 5) {
    const [joinRef, ref, topic, event, payload] = value;
    if (typeof topic !== "string" || typeof event !== "string" || typeof payload !== "object" || !payload)
      return null;
    return { joinRef, ref, topic, event, payload, array: true };
  }
  if (typeof value !== "object" || value === null) return null;
  const { join_ref, ref, topic, event, payload } = value as Record<string, unknown>;
  if (typeof topic !== "string" || typeof event !== "string" || typeof payload !== "object" || !payload)
    return null;
  return {
    joinRef: (join_ref ?? null) as string | null,
    ref: (ref ?? null) as string | null,
    topic,
    event,
    payload: payload as Record<string, unknown>,
    array: false,
  };
}

const encode = (frame: Frame) =>
  JSON.stringify(
    frame.array
      ? [frame.joinRef, frame.ref, frame.topic, frame.event, frame.payload]
      : {
          topic: frame.topic,
          event: frame.event,
          payload: frame.payload,
          ref: frame.ref,
          join_ref: frame.joinRef,
        },
  );

/** A joined channel: the caller's own token for it (or none: the key stands for it) and when its upstream one ends. */
interface Channel {
  token: string | undefined;
  joinRef: string | null;
  array: boolean;
  exp: number;
  /** When the caller's own credential ends (seconds): no fresh upstream token outlives it. */
  ends: number;
}

/** A close code one end may pass to the other (1005 and 1006 are only ever reported, never sent). */
const passable = (code: number) => (code === 1000 || (code >= 3000 && code < 5000) ? code : 1011);

/** Sends on `socket` unless it has closed meanwhile (sending after a close throws; the close is handled on its own). */
function send(socket: WebSocket, data: string | ArrayBuffer) {
  try {
    socket.send(data);
  } catch {
    // closed: the close event ends the other side
  }
}

/** Closes `socket` unless it is closed already (closing twice throws). */
function close(socket: WebSocket, code: number, reason?: string) {
  try {
    socket.close(code, reason);
  } catch {
    // already closed: nothing to tell
  }
}

export async function forwardRealtime(c: Context<AppEnv>, path: string): Promise<Response> {
  const { config, deps } = c.var;
  const upstream = config.supabase.upstream!;
  const search = new URL(c.req.url).searchParams;
  const sentKey = search.get("apikey") ?? undefined;
  const role: KeyRole = await keyRole(c, sentKey);
  const key = { role, value: sentKey ?? c.req.header("apikey") ?? "" };

  const url = upstreamUrl(upstream.url, path, search);
  // Realtime checks the URL's key as a JWT under the project's secret: the anon key, or a token that is as much.
  const upstreamKey = upstream.anonKey ?? (await upstreamToken(upstream, { role: "anon" }, deps.now())).token;
  url.searchParams.set("apikey", upstreamKey);
  const headers = outgoingHeaders(c.req.raw.headers);
  for (const name of ["sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"])
    headers.delete(name);
  headers.set("upgrade", "websocket");
  const answer = await fetchUpstream(deps.outbound, url.href, { headers });
  const toUpstream = answer.webSocket;
  if (answer.status !== 101 || !toUpstream) {
    const failure = answer.status === 101 ? 502 : cloudflareFailure(answer.status);
    if (failure) {
      answer.body?.cancel().catch(() => {});
      throw new UpstreamFailed(failure, `the socket's upgrade answered ${answer.status}`);
    }
    // The upstream's refusal (its 401 for a key it does not take, say) is its answer to give.
    return new Response(answer.body, { status: answer.status });
  }
  const [toCaller, ours] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  ours.accept();
  toUpstream.accept();

  const channels = new Map<string, Channel>();
  let refs = 0;
  const nowSeconds = () => Math.floor(deps.now() / 1000);

  let windowStart = deps.now();
  let exchanges = 0;

  /** The upstream token for `token` on a channel, with when the caller's credential ends; throws GoTrue's 401. */
  const exchange = async (token: string | undefined) => {
    if (deps.now() - windowStart > 60_000) [windowStart, exchanges] = [deps.now(), 0];
    if (++exchanges > MAX_EXCHANGES_PER_MINUTE) throw new TooManyExchanges();
    const caller: UpstreamRole = await callerOfToken(c, token, key);
    const { token: exchanged, exp } = await upstreamToken(upstream, caller, deps.now());
    return {
      exchanged,
      exp,
      ends: caller.role === "authenticated" ? caller.expiresAt : Number.POSITIVE_INFINITY,
    };
  };

  /** Refused on a channel: the caller is told on that channel, and the channel is left upstream. */
  const refuse = (frame: Frame, error: unknown) => {
    const reason = error instanceof GoTrueError ? error.message : "The token could not be checked";
    send(ours, encode({ ...frame, event: "phx_reply", payload: { status: "error", response: { reason } } }));
    if (channels.delete(frame.topic)) {
      const leave = { ...frame, ref: `fwd-${++refs}`, event: "phx_leave", payload: {} };
      send(toUpstream, encode(leave));
    }
  };

  const fromCaller = async (data: string | ArrayBuffer) => {
    const frame = typeof data === "string" ? parseFrame(data) : null;
    if (!frame || (frame.event !== "phx_join" && frame.event !== "access_token")) {
      if (frame?.event === "phx_leave") channels.delete(frame.topic);
      send(toUpstream, data);
    } else {
      const token = typeof frame.payload.access_token === "string" ? frame.payload.access_token : undefined;
      try {
        const { exchanged, exp, ends } = await exchange(token);
        const joinRef =
          frame.event === "phx_join" ? frame.joinRef : (channels.get(frame.topic)?.joinRef ?? frame.joinRef);
        // An access_token on a topic never joined is passed (Realtime ignores it) but not kept fresh.
        if (frame.event === "phx_join" || channels.has(frame.topic))
          channels.set(frame.topic, { token, joinRef, array: frame.array, exp, ends });
        send(toUpstream, encode({ ...frame, payload: { ...frame.payload, access_token: exchanged } }));
      } catch (error) {
        if (error instanceof TooManyExchanges) throw error;
        refuse(frame, error);
      }
    }
    await refreshDue();
  };

  /** A fresh token for each channel whose upstream token ends soon and whose caller's credential goes on past it. */
  const refreshDue = async () => {
    for (const [topic, channel] of channels) {
      if (channel.exp - nowSeconds() > REFRESH_MARGIN_SECONDS || channel.ends <= channel.exp) continue;
      const frame: Frame = {
        joinRef: channel.joinRef,
        ref: `fwd-${++refs}`,
        topic,
        event: "access_token",
        payload: {},
        array: channel.array,
      };
      try {
        const { exchanged, exp, ends } = await exchange(channel.token);
        channels.set(topic, { ...channel, exp, ends });
        send(toUpstream, encode({ ...frame, payload: { access_token: exchanged } }));
      } catch (error) {
        if (error instanceof TooManyExchanges) throw error;
        refuse(frame, error);
      }
    }
  };

  // The caller's frames are handled in order: a join's exchange must not be overtaken by the frames after it.
  let queue = Promise.resolve();
  ours.addEventListener("message", (event) => {
    queue = queue
      .then(() => fromCaller(event.data as string | ArrayBuffer))
      .catch((error) => {
        const [code, reason] =
          error instanceof TooManyExchanges ? [1008, error.message] : [1011, "internal error"];
        close(ours, code, reason);
        close(toUpstream, 1000);
      });
  });
  toUpstream.addEventListener("message", (event) => send(ours, event.data as string | ArrayBuffer));
  ours.addEventListener("close", (event) => close(toUpstream, passable(event.code), event.reason));
  toUpstream.addEventListener("close", (event) => close(ours, passable(event.code), event.reason));
  ours.addEventListener("error", () => close(toUpstream, 1011));
  toUpstream.addEventListener("error", () => close(ours, 1011));
  return new Response(null, { status: 101, webSocket: toCaller });
}
