import type { Env, MiddlewareHandler } from "hono";
import { readWithin } from "../lib/refused-body";

/**
 * Refuses a request body longer than `maxBytes` with the error `refusal` makes, the API's own shape. Hono's
 * `bodyLimit` stops reading a streamed body (no Content-Length) at the bound and leaves its reader locked: through
 * wrangler dev's proxy and workerd alike, a client still sending megabytes then lost its connection (a reset, or a 500
 * "Network connection lost") instead of getting the 413. This one reads past the rest up to a bound
 * (lib/refused-body.ts). A body whose Content-Length is over the bound is refused unread and unlocked: the runtime
 * drains it itself.
 */
export function boundedBody<E extends Env = Env>(
  maxBytes: number,
  refusal: () => Error,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const request = c.req.raw;
    if (!request.body) return next();
    const declared = request.headers.get("content-length");
    if (declared !== null && !request.headers.has("transfer-encoding")) {
      if (Number(declared) > maxBytes) throw refusal();
      return next();
    }
    const bytes = await readWithin(request.body, maxBytes);
    if (bytes === "too-large") throw refusal();
    // Read whole: the handlers read it again from the copy (as Hono's own limit does).
    c.req.raw = new Request(request, { body: bytes });
    return next();
  };
}
