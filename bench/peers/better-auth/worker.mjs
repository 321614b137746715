// The peer of `npm run bench`: better-auth 1.7.25 on workerd with a D1 binding, its documented Cloudflare setup
// (`database: env.DB`: its Kysely adapter detects the binding and uses its own D1 dialect). Bundled by wrangler from
// wrangler.toml beside this file, served by Miniflare like ours (bench/lib.mjs betterAuthWorker). The schema is
// better-auth's own, compiled by its migration code (bench/peers/better-auth/schema.mjs) and applied to the D1.
import { betterAuth } from "better-auth";
import { equalStrengthPassword } from "./equal-hasher.mjs";
import { BASE_PATH, betterAuthOptions, EQUAL_BASE_PATH, EXTEND_BASE_PATH } from "./options.mjs";

/**
 * One instance per isolate (built on the first request, as ours builds its app once per configuration). The
 * binding is the same object on every request; what is cached holds no request's I/O.
 */
let instances;
function instancesOf(env) {
  instances ??= {
    check: betterAuth(
      betterAuthOptions({
        database: env.DB,
        secret: env.BETTER_AUTH_SECRET,
        baseURL: env.BETTER_AUTH_URL,
        basePath: BASE_PATH,
      }),
    ),
    extend: betterAuth(
      betterAuthOptions({
        database: env.DB,
        secret: env.BETTER_AUTH_SECRET,
        baseURL: env.BETTER_AUTH_URL,
        basePath: EXTEND_BASE_PATH,
        updateAge: 0,
      }),
    ),
    equal: betterAuth(
      betterAuthOptions({
        database: env.DB,
        secret: env.BETTER_AUTH_SECRET,
        baseURL: env.BETTER_AUTH_URL,
        basePath: EQUAL_BASE_PATH,
        password: equalStrengthPassword,
      }),
    ),
  };
  return instances;
}

export default {
  fetch(request, env) {
    const { pathname } = new URL(request.url);
    const { check, extend, equal } = instancesOf(env);
    if (pathname.startsWith(`${EXTEND_BASE_PATH}/`)) return extend.handler(request);
    if (pathname.startsWith(`${EQUAL_BASE_PATH}/`)) return equal.handler(request);
    if (pathname.startsWith(`${BASE_PATH}/`)) return check.handler(request);
    return new Response("not found", { status: 404 });
  },
};
