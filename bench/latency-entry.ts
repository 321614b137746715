// `npm run bench:latency` only (issue 31 §4): the Worker's entry with every storage binding wrapped, so that each call
// waits as long as a delay profile says its round trip takes in production, and is recorded. Nothing of the service
// changes: this module hands the real default export a wrapped `env` and re-exports the real Durable Object classes
// (whose own storage is local to them, so it is not wrapped). Bundled by bench/latency.mjs with
// `wrangler deploy bench/latency-entry.ts --dry-run`; never deployed.
//
// Control routes (answered here, before the service): `/__latency/profile?name=<profile>` sets the delays (`none`:
// no delay), `/__latency/reset` forgets what was recorded, `/__latency/report` returns it: per route, how often each
// shape of round trips was seen, before the answer and after it (work handed to waitUntil).
//
// The service binding's `AuthService` is exported here too, over the same wrapped `env`: a consumer Worker in the same
// workerd binds it (bench/latency.mjs), and each `authenticate` call is recorded as a request is, under the route
// `RPC authenticate` (`RPC authenticate {live}` with `live: true`).
import { AsyncLocalStorage } from "node:async_hooks";
import type { Env } from "../src/env";
import worker, { AuthService as ServiceEntrypoint } from "../src/index";
import type { AuthenticateOptions } from "../src/platform";
import { type Call, type Delays, recordInto, shapeOf, tick, wrapEnv } from "./round-trips";

export {
  GuessGuard,
  JtiLedger,
  OneTimeCode,
  RateLimiter,
  RefreshSession,
  SessionFamilies,
  SignInLockout,
  WebauthnChallenge,
} from "../src/index";

const PROFILES: Record<string, Delays | null> = {
  none: null,
  "same-colo": {
    d1Replica: 1,
    d1PrimaryRead: 1,
    d1PrimaryWrite: 3,
    durableObject: 1,
    kvRead: 1,
    kvWrite: 1,
    r2: 1,
    queue: 1,
  },
  "replica-near-primary-far": {
    d1Replica: 2,
    d1PrimaryRead: 80,
    d1PrimaryWrite: 83,
    durableObject: 40,
    kvRead: 2,
    kvWrite: 80,
    r2: 40,
    queue: 40,
  },
  "all-distant": {
    d1Replica: 80,
    d1PrimaryRead: 80,
    d1PrimaryWrite: 83,
    durableObject: 80,
    kvRead: 80,
    kvWrite: 80,
    r2: 80,
    queue: 80,
  },
};
let delays: Delays | null = null;

interface RequestRecord {
  calls: Call[];
  answeredAt: number;
}

const requests = new AsyncLocalStorage<RequestRecord>();
recordInto({
  record: (call) => requests.getStore()?.calls.push(call),
  delay: (name) => (delays ? delays[name] : 0),
});

interface RouteStats {
  requests: number;
  before: Record<string, number>;
  after: Record<string, number>;
}
let stats: Record<string, RouteStats> = {};
/** Per route, the calls of the last request recorded, in order, with their waves: `/__latency/trace`. */
let traces: Record<string, string[]> = {};

function record(route: string, side: "before" | "after", calls: Call[]): void {
  stats[route] ??= { requests: 0, before: {}, after: {} };
  const of = stats[route];
  if (side === "before") of.requests++;
  const shape = shapeOf(calls);
  of[side][shape] = (of[side][shape] ?? 0) + 1;
  const lines = [...calls]
    .sort((a, b) => a.start - b.start)
    .map((call) => `${side} ${call.kind} [${call.start}-${call.end}] ${call.label}`);
  traces[route] = side === "before" ? lines : [...(traces[route] ?? []), ...lines];
}

function control(url: URL): Response {
  if (url.pathname === "/__latency/profile") {
    const name = url.searchParams.get("name") ?? "none";
    if (!(name in PROFILES)) return new Response(`unknown profile ${name}`, { status: 400 });
    delays = PROFILES[name] ?? null;
    return Response.json({ profile: name, delays });
  }
  if (url.pathname === "/__latency/trace") return Response.json(traces);
  if (url.pathname === "/__latency/reset") {
    stats = {};
    traces = {};
    return Response.json({ reset: true });
  }
  return Response.json({ profiles: PROFILES, stats });
}

/**
 * `ctx` as the service sees it: its `waitUntil` work also kept in `handedOver`, so that the calls it makes after the
 * answer are recorded on the "after" side.
 */
function handingOver(ctx: ExecutionContext, handedOver: Promise<unknown>[]): ExecutionContext {
  return new Proxy(ctx, {
    get(object, property) {
      if (property === "waitUntil") {
        return (work: Promise<unknown>) => {
          handedOver.push(work);
          object.waitUntil(work);
        };
      }
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/** Runs `work` (a request's or an RPC call's) recording its calls under `route`, before and after its answer. */
async function measured<T>(
  route: string,
  ctx: ExecutionContext,
  handedOver: Promise<unknown>[],
  work: () => Promise<T>,
): Promise<T> {
  const entry: RequestRecord = { calls: [], answeredAt: Number.POSITIVE_INFINITY };
  const answer = await requests.run(entry, work);
  entry.answeredAt = tick();
  record(
    route,
    "before",
    entry.calls.filter((call) => call.end < entry.answeredAt),
  );
  ctx.waitUntil(
    (async () => {
      for (let settled = 0; settled < handedOver.length; ) {
        const batch = handedOver.slice(settled);
        await Promise.allSettled(batch);
        settled += batch.length;
      }
      record(
        route,
        "after",
        entry.calls.filter((call) => call.end >= entry.answeredAt),
      );
    })(),
  );
  return answer;
}

/**
 * The real `AuthService` over the wrapped `env`, for a consumer's service binding; `authenticate` recorded. workerd
 * constructs an entrypoint per call, so the waitUntil work kept here is this call's.
 */
export class AuthService extends ServiceEntrypoint {
  private readonly handedOver: Promise<unknown>[];
  private readonly outerCtx: ExecutionContext;

  constructor(ctx: ExecutionContext, env: Env) {
    const handedOver: Promise<unknown>[] = [];
    super(handingOver(ctx, handedOver), wrapEnv(env));
    this.handedOver = handedOver;
    this.outerCtx = ctx;
  }

  override authenticate(request: Request, options?: AuthenticateOptions) {
    const route = `RPC authenticate${options?.live === true ? " {live}" : ""}`;
    return measured(route, this.outerCtx, this.handedOver, () => super.authenticate(request, options));
  }
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/__latency/")) return control(url);
    const handedOver: Promise<unknown>[] = [];
    return measured(`${request.method} ${url.pathname}`, ctx, handedOver, () =>
      (worker.fetch as NonNullable<typeof worker.fetch>)(request, wrapEnv(env), handingOver(ctx, handedOver)),
    );
  },
  scheduled: worker.scheduled,
  queue: worker.queue,
} satisfies ExportedHandler<Env>;
