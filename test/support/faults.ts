// Bindings that fail on purpose, for test/faults/: each wraps the real binding and fails the calls a plan picks, the
// way the platform fails them (workerd's and Cloudflare's own error wording and properties). Honest by construction: a
// fault "after" the work calls the real binding first, so what it wrote stays written and only the answer is lost.

/** How a wrapped binding fails. Every field is optional: by default every call fails before doing anything. */
export interface FaultPlan {
  /** Which calls fail: matched against a D1 statement's SQL, a method's name, or a fetched URL. All when unset. */
  match?: RegExp;
  /** Matching calls that pass before the first failure (fail after N calls). */
  after?: number;
  /** Matching calls that fail before the binding heals by itself. Unlimited when unset. */
  times?: number;
  /**
   * `before`: fails without doing the work; `after`: does the work, then fails (a reset or a lost connection after
   * the object or the database acted); `hang`: does nothing for `hangMs` (or until the request's signal aborts, for
   * fetch), then fails as the platform's own timeout does.
   */
  when?: "before" | "after" | "hang";
  hangMs?: number;
  /** The error thrown; each binding has the platform's usual one. */
  error?: () => Error;
}

/** A wrapped binding's switch and counters. */
export interface Fault {
  /** From now on every call goes through untouched. */
  heal(): void;
  /** Matching calls seen, and how many of them failed. */
  readonly calls: number;
  readonly failures: number;
  /** What each matching call was (a statement's SQL, a method, a URL), in order: a flow's steps, to fail each. */
  readonly seen: string[];
}

/** The errors the platform throws, with the properties workerd sets on them. */
export const platformErrors = {
  d1: () => new Error("D1_ERROR: Network connection lost."),
  d1Timeout: () =>
    new Error("D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset."),
  /** A Durable Object that queued too long: it did not run the call. */
  overloaded: () =>
    Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), {
      overloaded: true,
      retryable: false,
      remote: true,
    }),
  /** A Durable Object reset (its code updated, its machine moved): the call may or may not have run. */
  reset: () =>
    Object.assign(new Error("Durable Object reset because its code was updated."), {
      retryable: true,
      durableObjectReset: true,
      remote: true,
    }),
  kv: (operation = "GET") => new Error(`KV ${operation} failed: 503 Service Unavailable`),
  r2: (operation = "put") =>
    new Error(`${operation}: We encountered an internal error. Please try again. (10001)`),
  queue: () => new Error("Queue send failed: Service Unavailable"),
  network: () => new TypeError("Network connection lost."),
  email: () => new Error("email send failed: internal error"),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The plan as a decision per call: `run(label, work)` does the work or fails it as planned. */
function planned(plan: FaultPlan, fallback: () => Error) {
  let healed = false;
  let calls = 0;
  let failures = 0;
  const seen: string[] = [];
  const fault: Fault = {
    seen,
    heal: () => {
      healed = true;
    },
    get calls() {
      return calls;
    },
    get failures() {
      return failures;
    },
  };
  const error = plan.error ?? fallback;
  async function run<T>(label: string, work: () => Promise<T>, signal?: AbortSignal | null): Promise<T> {
    if (healed || (plan.match && !plan.match.test(label))) return work();
    calls++;
    seen.push(label);
    if (calls <= (plan.after ?? 0) || failures >= (plan.times ?? Number.POSITIVE_INFINITY)) return work();
    failures++;
    if (plan.when === "after") {
      await work();
      throw error();
    }
    if (plan.when === "hang") {
      await Promise.race([
        sleep(plan.hangMs ?? 50),
        ...(signal
          ? [new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))]
          : []),
      ]);
    }
    throw error();
  }
  return { fault, run };
}

/** Every function property of `target` goes through `run`, named by its property; the rest is the target's. */
function wrapMethods<T extends object>(
  target: T,
  run: <R>(label: string, work: () => Promise<R>) => Promise<R>,
  methods: readonly string[],
): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value !== "function") return value;
      if (!methods.includes(String(property))) return value.bind(object);
      return (...args: unknown[]) => run(String(property), async () => Reflect.apply(value, object, args));
    },
  });
}

/**
 * A D1 binding whose statements fail as planned; `match` is tried on each statement's SQL. A batch is one
 * transaction: it fails whole when any of its statements is picked, as D1's would, never half applied.
 */
export function failingD1(db: D1Database, plan: FaultPlan = {}): { binding: D1Database; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.d1);
  return { binding: wrapD1(db, run), fault };
}

/**
 * Every D1 shard of `bindings` (`AUTH_D1_SHARDS`: the home database `DB` and the user shards, src/db/shards.ts)
 * failing under ONE plan: calls are counted across them in the order the flow makes them, so `after: n` fails the
 * flow's n-th statement wherever its user lives. Spread `bindings` into the service's overrides.
 */
export function failingShards(
  env: Record<string, unknown>,
  plan: FaultPlan = {},
): { bindings: Record<string, D1Database>; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.d1);
  const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
  const bindings = Object.fromEntries(names.map((name) => [name, wrapD1(env[name] as D1Database, run)]));
  return { bindings, fault };
}

/**
 * A flow with D1 failing once at each of its statements, wherever they run (every shard as one: `failingShards`): the
 * statements learnt from one run that succeeds (`flow`, given the shards to build its service with), then, for each,
 * `each` with shards whose that statement fails once; `context` names the step and its SQL for assertion messages.
 * `when: "after"`: each statement runs and then its answer is lost (D1 applied it; the request cannot know). Returns
 * the statements walked, for the caller to check that the one it is about was among them.
 */
export async function eachStatementFailingOnce(
  env: Record<string, unknown>,
  flow: (bindings: Record<string, D1Database>) => Promise<unknown>,
  each: (bindings: Record<string, D1Database>, context: string) => Promise<unknown>,
  { when = "before" }: { when?: "before" | "after" } = {},
): Promise<string[]> {
  const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
  await flow(watched.bindings);
  const steps = [...watched.fault.seen];
  if (steps.length < 2)
    throw new Error(`the flow ran ${steps.length} statement(s): nothing to fail one by one`);
  const lost = when === "after" ? " (after)" : "";
  for (let step = 0; step < steps.length; step++) {
    const { bindings } = failingShards(env, { after: step, times: 1, when });
    await each(bindings, `step ${step}${lost}: ${steps[step]!.slice(0, 80)}`);
  }
  return steps;
}

type Run = <T>(label: string, work: () => Promise<T>) => Promise<T>;

/**
 * `db` with every statement and batch run through `run`, given its SQL (a batch's joined by ";\n"): a fault plan's
 * gate here, another test's hook between a request's steps (faults/storage-lost-answers.test.ts).
 */
export function wrapD1(db: D1Database, run: Run): D1Database {
  const sqlOf = new WeakMap<object, string>();
  const statement = (real: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(real, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => statement(target.bind(...values), sql);
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (!["first", "run", "all", "raw"].includes(String(property))) return value.bind(target);
        return (...args: unknown[]) => run(sql, async () => value.apply(target, args));
      },
    });
    sqlOf.set(wrapped, sql);
    return wrapped;
  };
  const batchOf =
    (batch: (statements: D1PreparedStatement[]) => Promise<D1Result[]>) =>
    (statements: D1PreparedStatement[]) =>
      run(statements.map((s) => sqlOf.get(s) ?? "").join(";\n"), () => batch(statements));
  const binding = new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => statement(target.prepare(sql), sql);
      if (property === "batch") return batchOf((statements) => target.batch(statements));
      if (property === "withSession") {
        return (constraint?: string) => {
          const session = target.withSession(constraint);
          return {
            prepare: (sql: string) => statement(session.prepare(sql), sql),
            batch: batchOf((statements) => session.batch(statements)),
            getBookmark: () => session.getBookmark(),
          };
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return binding;
}

/**
 * A Durable Object namespace whose stubs fail as planned: `match` is tried on the method called (`fetch` or an RPC
 * method's name). `when: "after"` is a reset in the middle of a call: the real object did its work, the caller sees
 * the error.
 */
export function failingNamespace<T extends DurableObjectNamespace>(
  namespace: T,
  plan: FaultPlan = {},
): { binding: T; fault: Fault } {
  const { fault, run } = planned(
    plan,
    plan.when === "after" ? platformErrors.reset : platformErrors.overloaded,
  );
  const stubOf = (stub: object) =>
    new Proxy(stub, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (typeof value !== "function" || property === "then") return value;
        return (...args: unknown[]) =>
          // Reflect.apply: an RPC stub's members answer any property, `apply` included, as a remote method.
          run(String(property), async () => Reflect.apply(value, target, args));
      },
    });
  const binding = new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => stubOf((value as (...a: unknown[]) => object).apply(target, args));
      }
      return value.bind(target);
    },
  });
  return { binding, fault };
}

/** A KV namespace whose operations (`get`, `put`, `delete`, `list`, `getWithMetadata`) fail as planned. */
export function failingKv(kv: KVNamespace, plan: FaultPlan = {}): { binding: KVNamespace; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.kv);
  return { binding: wrapMethods(kv, run, ["get", "put", "delete", "list", "getWithMetadata"]), fault };
}

/** An R2 bucket whose operations fail as planned; `match` is tried on the operation's name (`put`, `get`, …). */
export function failingR2(bucket: R2Bucket, plan: FaultPlan = {}): { binding: R2Bucket; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.r2);
  const operations = [
    "put",
    "get",
    "head",
    "delete",
    "list",
    "createMultipartUpload",
    "resumeMultipartUpload",
  ];
  return { binding: wrapMethods(bucket, run, operations), fault };
}

/** A queue producer whose `send` and `sendBatch` fail as planned. */
export function failingQueue<T>(queue: Queue<T>, plan: FaultPlan = {}): { binding: Queue<T>; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.queue);
  return { binding: wrapMethods(queue, run, ["send", "sendBatch"]), fault };
}

/** A `send_email` binding that fails as planned, in front of `target` (or of nothing: every pass is accepted). */
export function failingEmail(target?: SendEmail, plan: FaultPlan = {}): { binding: SendEmail; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.email);
  const binding = {
    send: (message: Parameters<SendEmail["send"]>[0]) => run("send", async () => target?.send(message)),
  } as unknown as SendEmail;
  return { binding, fault };
}

/**
 * An outbound service binding (`OUTBOUND`) whose fetches fail as planned; `match` is tried on the URL. `hang` waits
 * for the request's own signal (the service's timeout) or `hangMs`, whichever comes first.
 */
export function failingFetcher(fetcher: Fetcher, plan: FaultPlan = {}): { binding: Fetcher; fault: Fault } {
  const { fault, run } = planned(plan, platformErrors.network);
  const binding = new Proxy(fetcher, {
    get(target, property) {
      if (property !== "fetch") {
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        return run(request.url, () => target.fetch(request), request.signal);
      };
    },
  });
  return { binding, fault };
}
