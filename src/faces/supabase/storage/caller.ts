import type { Context } from "hono";
import type { AppEnv } from "../../../http/app-env";
import type { Caller } from "../../../storage";

/**
 * The caller of a request to the face's Storage, decided once at the door (app.ts) and read by every route. Kept by
 * the request object, which it lives and goes with: plain data, never another request's.
 */
const callers = new WeakMap<Request, Caller>();

export function rememberCaller(c: Context<AppEnv>, caller: Caller): void {
  callers.set(c.req.raw, caller);
}

export function callerOf(c: Context<AppEnv>): Caller {
  const caller = callers.get(c.req.raw);
  // The door sets it before any route runs; a route reached otherwise is a wiring mistake, not a client's.
  if (!caller) throw new Error("the storage face's caller was not decided");
  return caller;
}
