// The platform floor for `npm run bench`: what a Worker with no logic costs on this machine, and what one D1 query
// and one Durable Object call add, and what a plain R2 read costs. The auth scenarios cannot be faster than the floor of the storage they touch.
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
    else if (pathname.startsWith("/r2/")) {
      // A plain R2 read, whole or ranged: the floor of any download.
      const range = request.headers.get("range")?.match(/^bytes=(\d+)-(\d+)$/);
      const object = await env.FILES.get(
        pathname.slice(4),
        range ? { range: { offset: Number(range[1]), length: Number(range[2]) - Number(range[1]) + 1 } } : {},
      );
      return new Response(object.body, { status: range ? 206 : 200 });
    }
    return new Response("ok");
  },
};
