import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";

/**
 * Links Nhost mailed before the move (verify, reset, magic link) point at Nhost Auth's own path,
 * `https://<auth host>/v1/verify?ticket=…`. Once the app's auth host points at this Worker, that path is sent on to
 * the service's verify endpoint with the same query, where the imported ticket is consumed as any other (contract
 * move-in §3). The query is passed as it came: the verify endpoint checks `redirectTo` against the allowed URLs.
 */
export function nhostLinkRoutes(authApiPrefix: string) {
  return new Hono<AppEnv>().get("/v1/verify", (c) => {
    const { search } = new URL(c.req.url);
    return c.redirect(`${authApiPrefix}/verify${search}`, 302);
  });
}
