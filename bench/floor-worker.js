// The platform floor for `npm run bench`: what a Worker with no logic costs on this machine, and what one D1 query
// and one Durable Object call or one Rate Limiting binding call add, what a refresh cannot go below (a DO write, a D1 read, an RS256 signature), and
// what a plain R2 read costs. The auth scenarios cannot be faster than the floor of the storage they touch.
import { DurableObject } from "cloudflare:workers";

export class Probe extends DurableObject {
  ping() {
    return 1;
  }

  /** What a rotation does to its object: one small write. */
  write(value) {
    this.ctx.storage.kv.put("state", value);
    return 1;
  }
}

let signingKey;

/** The refresh floor: one Durable Object call that writes, one D1 read, one RS256 signature (an access token). */
async function refreshFloor(env) {
  signingKey ??= crypto.subtle
    .generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      false,
      ["sign"],
    )
    .then((pair) => pair.privateKey);
  const object = env.PROBE.get(env.PROBE.idFromName(`family-${Math.floor(Math.random() * 32)}`));
  await object.write(Date.now());
  await env.DB.prepare("SELECT 1").first();
  await crypto.subtle.sign("RSASSA-PKCS1-v1_5", await signingKey, new TextEncoder().encode("header.payload"));
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/d1") await env.DB.prepare("SELECT 1").first();
    else if (pathname === "/refresh-floor") await refreshFloor(env);
    else if (pathname === "/do") await env.PROBE.get(env.PROBE.idFromName("probe")).ping();
    else if (pathname === "/ratelimit") await env.LIMITER.limit({ key: "ip:127.0.0.1" });
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
