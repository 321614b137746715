// The consumer Worker of bench/workers.mjs: an app's own Worker beside the service, asking who sent a request and
// whether they may, in the two ways a Workers developer can (issue 45, "Speed"):
// - GET /bare: nothing asked of anyone, the ceiling of every other route;
// - GET /jose: the Bearer token verified here, with jose and the service's key set fetched over HTTP from its
//   JWKS URL and cached in this isolate (`createRemoteJWKSet`), what an app does without the binding;
// - GET /binding, /binding-live: `AUTH.authenticate(request)` over the service binding to the service's
//   `AuthService` entrypoint, without and with `live`; /rpc-floor the same call to an entrypoint that does nothing
//   (bench/rpc-floor-worker.js): what the hop alone costs;
// - GET /check: `AUTH.check` of the bench user editing the bench document, which holds 100 stored relationships,
//   under the ten-policy set bench/workers.mjs installs.
// Every route answers 200 only when the answer is the expected one (the user named by `?user=`, or an allow), so that
// autocannon's status counts prove each request did its work; anything else is a 500 with what came back.
import { createRemoteJWKSet, jwtVerify } from "jose";

/** The service's key set, per isolate: jose fetches it once and keeps it (its cooldown and max age). */
let keySet;

const unexpected = (what) => new Response(JSON.stringify(what ?? null), { status: 500 });

function bearerOf(request) {
  const header = request.headers.get("authorization") ?? "";
  return header.startsWith("Bearer ") ? header.slice(7) : "";
}

async function byJose(request, env, user) {
  keySet ??= createRemoteJWKSet(new URL(env.JWKS_URL));
  try {
    const { payload } = await jwtVerify(bearerOf(request), keySet, { issuer: env.ISSUER });
    return payload.sub === user ? new Response(payload.sub) : unexpected(payload);
  } catch (error) {
    return unexpected(String(error));
  }
}

async function byBinding(binding, request, user, options) {
  const answer = await binding.authenticate(request, options);
  const live = options?.live === true;
  return answer?.user?.id === user && answer.session?.live === live
    ? new Response(answer.user.id)
    : unexpected(answer);
}

async function byCheck(env, user, document) {
  const answer = await env.AUTH.check({
    subject: { type: "user", id: user },
    action: { name: "edit" },
    resource: { type: "Document", id: document },
  });
  return answer?.decision === true ? new Response("allowed") : unexpected(answer);
}

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    const user = url.searchParams.get("user");
    switch (url.pathname) {
      case "/bare":
        return new Response(user);
      case "/jose":
        return byJose(request, env, user);
      case "/binding":
        return byBinding(env.AUTH, request, user, undefined);
      case "/binding-live":
        return byBinding(env.AUTH, request, user, { live: true });
      case "/rpc-floor":
        return byBinding(env.FLOOR, request, user, undefined);
      case "/check":
        return byCheck(env, user, url.searchParams.get("document"));
      default:
        return new Response("not found", { status: 404 });
    }
  },
};
