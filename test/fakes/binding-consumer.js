// A consumer Worker of the service binding (docs/workers.md), as an app's own Worker would be: it binds the service's
// `AuthService` as AUTH and `AuthAdmin` as ADMIN, and as ADMIN_UNNAMED without a caller (vitest.config.ts), and the tests drive it over HTTP through the
// runner's BINDING_CONSUMER binding. Every call below crosses a real service binding into the Worker under test.
//
// - any request but the one below: `AUTH.authenticate(request, options)` of that very request (its headers, method
//   and URL, what a DPoP proof is checked against), `options` JSON in the `binding-options` query parameter;
// - POST https://consumer.test/__rpc {binding, method, args}: `env[binding][method](...args)`, its answer as JSON;
// - POST https://consumer.test/__crafted {binding, method, args}: the same, with arguments JSON cannot carry made
//   here (`{"$make": "function" | "proxy" | "deep" | "string", size}`), and a throw reported as `{ thrown }` (which
//   side threw is what test/platform/binding-attacks.test.ts asks).
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.hostname === "consumer.test" && url.pathname === "/__crafted") {
      const { binding, method, args } = await request.json();
      try {
        return Response.json({ answer: (await env[binding][method](...args.map(crafted))) ?? null });
      } catch (error) {
        return Response.json({ thrown: `${error?.name}: ${error?.message}` });
      }
    }
    if (url.hostname === "consumer.test" && url.pathname === "/__rpc") {
      const { binding, method, args } = await request.json();
      return Response.json({ answer: (await env[binding][method](...args)) ?? null });
    }
    const options = url.searchParams.get("binding-options");
    const answer = await env.AUTH.authenticate(request, options ? JSON.parse(options) : undefined);
    return Response.json({ answer: answer ?? null });
  },
};

/** An argument JSON cannot carry, made in this Worker: a function, a Proxy, a deep nest, a long string. */
function crafted(arg) {
  switch (arg?.$make) {
    case "function":
      return () => "called";
    case "proxy":
      return new Proxy({ email: "proxy@example.com" }, { get: (target, key) => target[key] });
    case "deep": {
      let nest = {};
      for (let level = 0; level < arg.size; level++) nest = { nest };
      return placed(arg, nest);
    }
    case "string":
      return placed(arg, "a".repeat(arg.size));
    default:
      return arg;
  }
}

/** The made value itself, or put at `at` inside `into`. */
const placed = (arg, value) => (arg.at === undefined ? value : { ...arg.into, [arg.at]: value });
