import type { Ctx } from "./page-paths";

/**
 * A cross-site form post (login CSRF, forced consent) is refused: browsers name the posting page's origin, which
 * must be the origin this request came to.
 */
export function isSameOrigin(c: Ctx): boolean {
  return c.req.header("origin") === new URL(c.req.url).origin;
}
