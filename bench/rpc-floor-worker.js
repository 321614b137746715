// The hop's floor for bench/workers.mjs: an entrypoint in a Worker of its own, beside the service in the same workerd,
// whose `authenticate(request)` does no work and answers a value of the shape `AuthService.authenticate` answers.
// The consumer's `/rpc-floor` row is what a service-binding call costs before the service does anything: no row
// through the binding can be faster.
import { WorkerEntrypoint } from "cloudflare:workers";

export class Floor extends WorkerEntrypoint {
  authenticate(request) {
    const id = new URL(request.url).searchParams.get("user");
    return {
      user: { id, roles: ["user"], defaultRole: "user" },
      session: { id: "floor", live: false },
      claims: { sub: id },
      face: "nhost",
      credential: "access-token",
    };
  }
}

export default {
  fetch() {
    return new Response("the floor is reached through its Floor entrypoint", { status: 404 });
  },
};
