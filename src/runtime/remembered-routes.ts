import type { Result, Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

/** Paths remembered per isolate; past this, the memory starts again (a crawl of random paths costs one clear). */
const MAX_REMEMBERED = 1_000;
/** Longer paths are matched each time: a remembered key should stay small. */
const MAX_PATH = 256;

/**
 * Hono's own router (RegExpRouter, or TrieRouter where some route's pattern is beyond it: ours are), with each
 * method and path's match remembered. The routes are fixed once the app is built (once per configuration), so a
 * match is the same on every request to that path; the trie's walk over ~500 routes was a tenth of a bare route's
 * CPU (docs/performance.md, "Issue 48: per-request overhead"). A match holds the path's parameters as the router
 * found them; Hono only reads it.
 */
export class RememberedRouter<T> implements Router<T> {
  name = "RememberedRouter";
  readonly #router: Router<T> = new SmartRouter<T>({
    routers: [new RegExpRouter<T>(), new TrieRouter<T>()],
  });
  readonly #matches = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.#matches.clear();
    this.#router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MAX_PATH) return this.#router.match(method, path);
    const key = `${method} ${path}`;
    let found = this.#matches.get(key);
    if (!found) {
      found = this.#router.match(method, path);
      if (this.#matches.size >= MAX_REMEMBERED) this.#matches.clear();
      this.#matches.set(key, found);
    }
    return found;
  }
}
