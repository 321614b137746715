// The platform floor for `npm run bench`: what a Worker with no logic costs on this machine, and what one D1 query
// and one Durable Object call add. The auth scenarios cannot be faster than the floor of the storage they touch.
import { DurableObject } from "cloudflare:workers";

export class Probe extends DurableObject {
  ping() {
    return 1;
  }
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/d1") await env.DB.prepare("SELECT 1").first();
    else if (pathname === "/do") await env.PROBE.get(env.PROBE.idFromName("probe")).ping();
    return new Response("ok");
  },
};
