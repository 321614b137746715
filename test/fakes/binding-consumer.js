// A consumer Worker of the service binding (docs/workers.md), as an app's own Worker would be: it binds the service's
// `AuthService` as AUTH and `AuthAdmin` as ADMIN (vitest.config.ts), and the tests drive it over HTTP through the
// runner's BINDING_CONSUMER binding. Every call below crosses a real service binding into the Worker under test.
//
// - any request but the one below: `AUTH.authenticate(request, options)` of that very request (its headers, method
//   and URL, what a DPoP proof is checked against), `options` JSON in the `binding-options` query parameter;
// - POST https://consumer.test/__rpc {binding, method, args}: `env[binding][method](...args)`, its answer as JSON.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.hostname === "consumer.test" && url.pathname === "/__rpc") {
      const { binding, method, args } = await request.json();
      return Response.json({ answer: (await env[binding][method](...args)) ?? null });
    }
    const options = url.searchParams.get("binding-options");
    const answer = await env.AUTH.authenticate(request, options ? JSON.parse(options) : undefined);
    return Response.json({ answer: answer ?? null });
  },
};
