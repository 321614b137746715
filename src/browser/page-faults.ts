import { type Env, Hono } from "hono";
import type { AppError } from "../errors";
import type { Ctx } from "./page-paths";
import { render, retryAfterOf } from "./page-response";
import { pageText } from "./page-text";
import { faultProblem } from "./render";

/**
 * A fault (status >= 500) on a person's page answered as a page, not the API's JSON: the app's error handler
 * (src/runtime/app.ts) asks `onPage` and answers with `faultPage`. Which routes are pages is decided where they are
 * mounted (`asPages`), never from the request's Accept header.
 */

/** The requests whose fault was thrown by a page's own handler. */
const pageRequests = new WeakSet<Request>();

/**
 * `routes` as pages: each of its handlers, and only those, marks its request when it throws, then lets the error go
 * on to the app's handler. Hono's `route()` wraps every handler of a sub-app that has its own `onError` with it, so
 * the mark follows the routes the sub-app declares, whatever their paths; a `use("*")` would not do: on a sub-app
 * mounted at "/" it runs for every path under the mount, the API's too.
 */
export function asPages<E extends Env>(routes: Hono<E>): Hono<E> {
  return new Hono<E>()
    .onError((caught, c) => {
      pageRequests.add(c.req.raw);
      throw caught;
    })
    .route("/", routes);
}

/** Whether the request's fault came from a page (`asPages`). */
export const onPage = (c: Ctx): boolean => pageRequests.has(c.req.raw);

/**
 * The page for a fault, in the page's language, with the status the API would answer (the catalog's faults are 500
 * and 503, src/errors.ts), `Retry-After` on a 503, never cached, the pages' CSP (`render`), and the request id shown
 * small, as the API's fault answers carry it (`requestId`).
 */
export function faultPage(c: Ctx, fault: AppError): Promise<Response> {
  const t = pageText(c);
  const unavailable = fault.status === 503;
  c.header("Cache-Control", "no-store");
  if (unavailable) c.header("Retry-After", String(retryAfterOf(fault)));
  const message = unavailable ? t.errors.unavailable : t.errors.internal;
  return render(c, unavailable ? 503 : 500, t.faultTitle, faultProblem(t, message, c.var.requestId), { t });
}
