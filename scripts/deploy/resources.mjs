// The Cloudflare resources [env.production] needs, which of them the account already has, and creating the rest.
// Found by name (D1 database, KV namespace title, R2 bucket, queue, Hyperdrive configuration), so a second run, or an
// account where the Deploy to Cloudflare button or an earlier run made some of them, creates only what is missing. An
// id already in the configuration must be one of the account's: a deploy onto another account's id would fail late.
import { parseJsonOutput, parseLabelled, parseTable, snippetValue } from "./wrangler.mjs";

/** A value still to fill in: absent, empty, or a REPLACE_… placeholder. */
const unset = (value) => !value || /REPLACE_/.test(String(value));

/** The name wrangler's own provisioning gives a binding's resource (`edge-auth` + OAUTH2_REQUESTS). */
const provisionedName = (worker, binding) => `${worker}-${binding.toLowerCase().replaceAll("_", "-")}`;

/** A shard's database name: DB_1 of `edge-auth` is `edge-auth-shard-1` (wrangler.toml's example). */
const shardName = (home, binding) => {
  const number = /^DB_(\d+)$/.exec(binding)?.[1];
  return number ? `${home}-shard-${number}` : `${home}-${binding.toLowerCase().replaceAll("_", "-")}`;
};

/**
 * Every resource, in the order they are listed and created: `{ kind, binding?, name, id?, declared }`. `id` is the
 * configuration's (null: to find or create); `declared` is false for an entry the configuration does not have yet
 * (a shard of AUTH_D1_SHARDS, the mirror's Hyperdrive) and that the deploy adds.
 */
export function desiredResources({ production, worker, shards, mirrorUrl }) {
  const resources = [];
  const d1 = production.d1_databases ?? [];
  const home = d1.find((entry) => entry.binding === "DB")?.database_name ?? worker;
  for (const entry of d1) {
    resources.push({
      kind: "d1",
      binding: entry.binding,
      name: entry.database_name ?? provisionedName(worker, entry.binding),
      id: unset(entry.database_id) ? null : entry.database_id,
      declared: true,
    });
  }
  for (const binding of shards) {
    if (d1.some((entry) => entry.binding === binding)) continue;
    resources.push({
      kind: "d1",
      binding,
      name: binding === "DB" ? home : shardName(home, binding),
      id: null,
      declared: false,
    });
  }
  for (const entry of production.kv_namespaces ?? []) {
    resources.push({
      kind: "kv",
      binding: entry.binding,
      name: provisionedName(worker, entry.binding),
      id: unset(entry.id) ? null : entry.id,
      declared: true,
    });
  }
  for (const entry of production.r2_buckets ?? []) {
    resources.push({
      kind: "r2",
      binding: entry.binding,
      name: entry.bucket_name ?? provisionedName(worker, entry.binding),
    });
  }
  const queues = new Set();
  for (const producer of production.queues?.producers ?? []) queues.add(producer.queue);
  for (const consumer of production.queues?.consumers ?? []) {
    queues.add(consumer.queue);
    if (consumer.dead_letter_queue) queues.add(consumer.dead_letter_queue);
  }
  for (const name of queues) resources.push({ kind: "queue", name });
  // The Postgres mirror (docs/hasura.md): on when its binding is declared, or when the deploy is given the database
  // (AUTH_MIRROR_DATABASE_URL, as `npm start` takes it).
  const mirror = (production.hyperdrive ?? []).find((entry) => entry.binding === "MIRROR_DB");
  if (mirror || mirrorUrl) {
    resources.push({
      kind: "hyperdrive",
      binding: "MIRROR_DB",
      name: `${worker}-mirror`,
      id: mirror && !unset(mirror.id) ? mirror.id : null,
      declared: Boolean(mirror),
    });
  }
  return resources;
}

const LABEL = {
  d1: "D1 database",
  kv: "KV namespace",
  r2: "R2 bucket",
  queue: "queue",
  hyperdrive: "Hyperdrive",
};
export const describe = (resource) =>
  `${LABEL[resource.kind]} ${resource.name}${resource.binding ? ` (${resource.binding})` : ""}`;

/** Runs a listing command; its output, or throws with wrangler's own message. */
function list(wrangler, args) {
  const listed = wrangler(args, { capture: true });
  if (listed.status !== 0) {
    throw new Error(`\`wrangler ${args.join(" ")}\` failed: ${(listed.stderr || listed.stdout).trim()}`);
  }
  return listed.stdout;
}

/**
 * What the account has, by kind: name → id (a Map) for the kinds with ids, a Set of names for the others. One
 * listing per kind needed; queues page by page until every wanted name is seen or a page is empty.
 */
export function accountResources(wrangler, resources) {
  const kinds = new Set(resources.map((resource) => resource.kind));
  const found = {};
  if (kinds.has("d1")) {
    found.d1 = new Map(
      parseJsonOutput(list(wrangler, ["d1", "list", "--json"])).map((db) => [db.name, db.uuid]),
    );
  }
  if (kinds.has("kv")) {
    found.kv = new Map(
      parseJsonOutput(list(wrangler, ["kv", "namespace", "list"])).map((namespace) => [
        namespace.title,
        namespace.id,
      ]),
    );
  }
  if (kinds.has("r2")) found.r2 = new Set(parseLabelled(list(wrangler, ["r2", "bucket", "list"]), "name"));
  if (kinds.has("queue")) {
    found.queue = new Set();
    const wanted = resources.filter((resource) => resource.kind === "queue").map((resource) => resource.name);
    for (let page = 1; !wanted.every((name) => found.queue.has(name)); page++) {
      const rows = parseTable(
        list(wrangler, ["queues", "list", ...(page > 1 ? ["--page", String(page)] : [])]),
      );
      if (rows.length === 0) break;
      for (const row of rows) found.queue.add(row.name);
    }
  }
  if (kinds.has("hyperdrive")) {
    found.hyperdrive = new Map(
      parseTable(list(wrangler, ["hyperdrive", "list"])).map((row) => [row.name, row.id]),
    );
  }
  return found;
}

/**
 * Each resource with what the deploy does about it: `keep` (exists, id known), `adopt` (exists by name, its id to
 * write), `create`. A configured id the account has not is a problem (returned), never replaced behind the user.
 */
export function planResources(resources, found) {
  const problems = [];
  const planned = resources.map((resource) => {
    const known = found[resource.kind];
    if (!(known instanceof Map)) return { ...resource, action: known.has(resource.name) ? "keep" : "create" };
    if (resource.id) {
      if (![...known.values()].includes(resource.id)) {
        problems.push(
          `${describe(resource)}: its id ${resource.id} in the configuration is not one of this account's ${LABEL[resource.kind]}s; remove it (the deploy then finds or creates ${resource.name}) or log in to the account it belongs to`,
        );
      }
      return { ...resource, action: "keep" };
    }
    if (known.has(resource.name)) return { ...resource, id: known.get(resource.name), action: "adopt" };
    return { ...resource, action: "create" };
  });
  return { planned, problems };
}

/** The command creating a resource, and how to read its id from what it prints (null: it has none). */
function createCommand(resource, mirrorUrl) {
  switch (resource.kind) {
    case "d1":
      return { args: ["d1", "create", resource.name], id: (out) => snippetValue(out, "database_id") };
    case "kv":
      return { args: ["kv", "namespace", "create", resource.name], id: (out) => snippetValue(out, "id") };
    case "r2":
      return { args: ["r2", "bucket", "create", resource.name], id: null };
    case "queue":
      return { args: ["queues", "create", resource.name], id: null };
    case "hyperdrive":
      // The mirror reads what the request wrote: a cached answer would be stale (docs/hasura.md).
      return {
        args: [
          "hyperdrive",
          "create",
          resource.name,
          `--connection-string=${mirrorUrl}`,
          "--caching-disabled",
        ],
        id: (out) => /Hyperdrive \S+ config: (\S+)/.exec(out)?.[1] ?? snippetValue(out, "id"),
      };
  }
}

/** Creates every resource planned `create`; returns them with their ids. Stops at the first failure (thrown). */
export function createResources(wrangler, planned, { mirrorUrl, log }) {
  return planned.map((resource) => {
    if (resource.action !== "create") return resource;
    const { args, id } = createCommand(resource, mirrorUrl);
    const created = wrangler(args, { capture: true });
    if (created.status !== 0) {
      const shown = args.map((arg) =>
        arg.startsWith("--connection-string=") ? "--connection-string=…" : arg,
      );
      throw new Error(`\`wrangler ${shown.join(" ")}\` failed: ${(created.stderr || created.stdout).trim()}`);
    }
    const newId = id ? id(created.stdout) : null;
    if (id && !newId)
      throw new Error(`created ${describe(resource)}, but found no id in what wrangler printed`);
    log(`deploy: created ${describe(resource)}`);
    return { ...resource, id: newId ?? resource.id };
  });
}
