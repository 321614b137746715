// Writing the ids of the resources a deploy found or created into the user's wrangler.toml, [env.production], where
// the README always said to paste them: the file stays the one the user reads and commits (ids are not secrets), and
// wrangler's own commands (d1 migrations, secret, tail) keep working on it with --env production. An entry's id line
// is replaced, or added under its binding line; an entry the file does not have (a shard of AUTH_D1_SHARDS, the
// mirror's Hyperdrive) is appended at the end as a block of its own. Comments and layout are kept as they are.
import { readFileSync, renameSync, writeFileSync } from "node:fs";

const TABLE = { d1: "d1_databases", kv: "kv_namespaces", hyperdrive: "hyperdrive" };
const ID_KEY = { d1: "database_id", kv: "id", hyperdrive: "id" };

const quote = (value) => JSON.stringify(String(value));

/**
 * Sets `key` of the `[[env.<env>.<table>]]` entry whose `binding` is `binding`; returns the new text, or null when
 * the file does not declare that entry as an array-of-tables block (an inline table is left to the user).
 */
export function setEntryKey(text, { env, table, binding, key, value }) {
  const lines = text.split("\n");
  const header = `[[env.${env}.${table}]]`;
  for (let start = 0; start < lines.length; start++) {
    if (lines[start].trim() !== header) continue;
    let end = start + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
    const block = lines.slice(start + 1, end);
    const bindingLine = block.findIndex((line) => new RegExp(`^\\s*binding\\s*=\\s*"${binding}"`).test(line));
    if (bindingLine < 0) continue;
    const keyLine = block.findIndex((line) => new RegExp(`^\\s*${key}\\s*=`).test(line));
    if (keyLine >= 0) lines[start + 1 + keyLine] = `${key} = ${quote(value)}`;
    else lines.splice(start + 2 + bindingLine, 0, `${key} = ${quote(value)}`);
    return lines.join("\n");
  }
  return null;
}

/** The block for an entry the file does not have. */
function newBlock(env, resource) {
  if (resource.kind === "d1") {
    return [
      `# Added by \`npm run deploy\`: AUTH_D1_SHARDS lists ${resource.binding} (docs/operations.md, "More than one D1 database").`,
      `[[env.${env}.d1_databases]]`,
      `binding = ${quote(resource.binding)}`,
      `database_name = ${quote(resource.name)}`,
      `database_id = ${quote(resource.id)}`,
      `migrations_dir = "migrations"`,
    ];
  }
  return [
    "# Added by `npm run deploy`: the Postgres mirror's Hyperdrive (docs/hasura.md).",
    `[[env.${env}.hyperdrive]]`,
    `binding = ${quote(resource.binding)}`,
    `id = ${quote(resource.id)}`,
  ];
}

/**
 * Writes every id the configuration lacks (resources planned `adopt` or `create` with an id); returns what it changed
 * (one line each), or throws naming an entry it could not write. The file is replaced whole (written aside, renamed).
 */
export function writeIds(path, env, resources) {
  let text = readFileSync(path, "utf8");
  const changed = [];
  for (const resource of resources) {
    if (!TABLE[resource.kind] || resource.action === "keep" || !resource.id) continue;
    if (resource.declared) {
      const next = setEntryKey(text, {
        env,
        table: TABLE[resource.kind],
        binding: resource.binding,
        key: ID_KEY[resource.kind],
        value: resource.id,
      });
      if (next === null) {
        throw new Error(
          `could not write ${ID_KEY[resource.kind]} = "${resource.id}" for ${resource.binding} into ${path}: write it there yourself, then run the deploy again`,
        );
      }
      text = next;
    } else {
      text = `${text.trimEnd()}\n\n${newBlock(env, resource).join("\n")}\n`;
    }
    changed.push(`${TABLE[resource.kind]} ${resource.binding}: ${ID_KEY[resource.kind]} = "${resource.id}"`);
  }
  if (changed.length > 0) {
    const aside = `${path}.${process.pid}.tmp`;
    writeFileSync(aside, text);
    renameSync(aside, path);
  }
  return changed;
}
