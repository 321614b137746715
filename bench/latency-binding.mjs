// The service binding's rows of `npm run bench:latency` (issue 48, "Round trips": "the service-binding
// `authenticate`"): an app's own Worker (bench/consumer-worker.js, the one `npm run bench` measures) in the same
// workerd as the service, calling `env.AUTH.authenticate(request)` over a real service binding to `AuthService`, as
// docs/workers.md shows an app doing. bench/latency-entry.ts exports that entrypoint over its recording bindings, so
// each call's storage calls are recorded under `RPC authenticate` (`RPC authenticate {live}`), as a request's are.
// autocannon drives the consumer's own socket; a consumer route answers 200 only when the binding named the bench
// user (and, for `live`, said the session stands), so every 2xx proves the call did its work.
import { join } from "node:path";
import { bundleConsumer, consumerWorkers } from "./workers.mjs";

/** The consumer (and the RPC floor beside it) bundled into `dir/consumer`, as Workers for `serveOurs`' `workers`. */
export async function bindingConsumer(dir, server) {
  const outdir = join(dir, "consumer");
  await bundleConsumer(outdir);
  return consumerWorkers(outdir, server);
}

/** The two rows: `authenticate(request)` (a signature check) and `authenticate(request, { live: true })`. */
export async function bindingPaths(ours) {
  const consumer = (await ours.mf.unsafeGetDirectURL("consumer")).origin;
  const headers = { authorization: `Bearer ${ours.session.accessToken}` };
  const user = `user=${ours.session.user.id}`;
  return [
    ["RPC authenticate", "RPC authenticate", { url: `${consumer}/binding?${user}`, headers }],
    [
      "RPC authenticate live",
      "RPC authenticate {live}",
      { url: `${consumer}/binding-live?${user}`, headers },
    ],
  ];
}
