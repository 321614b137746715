// The Postgres mirror's binding for `wrangler dev` (docs/hasura.md): `MIRROR_DB` exists only when a database is
// configured, but wrangler refuses a Hyperdrive binding without a local database. So the binding is not in
// wrangler.toml: when AUTH_MIRROR_DATABASE_URL is set, `npm start` (and the compatibility tests) run wrangler dev with
// wrangler.mirror.toml, wrangler.toml plus the binding, written next to it so that its relative paths (main,
// migrations, .dev.vars, .wrangler/state) mean the same. The URL itself stays out of the file: wrangler reads it from
// CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_MIRROR_DB.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MIRROR_URL_VARIABLE = "AUTH_MIRROR_DATABASE_URL";
export const MIRROR_CONFIG = "wrangler.mirror.toml";
const BINDING = "MIRROR_DB";

/**
 * The URL as wrangler's local Hyperdrive accepts it: postgres(ql)://, a user, a database, and a password, which it
 * insists on even for a server that trusts local connections (then any password does, and one is filled in).
 */
export function localMirrorUrl(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${MIRROR_URL_VARIABLE} is not a URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    throw new Error(`${MIRROR_URL_VARIABLE} must be a postgres:// URL, not ${url.protocol}//…`);
  if (!url.username || url.pathname.length <= 1)
    throw new Error(
      `${MIRROR_URL_VARIABLE} needs a user and a database: postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
    );
  if (!url.password) url.password = "unused";
  return url.toString();
}

/** The URL without its password, for messages. */
export const redacted = (value) => {
  const url = new URL(value);
  if (url.password) url.password = "***";
  return url.toString();
};

/**
 * Writes wrangler.mirror.toml in `root` and returns what wrangler dev needs: its config file and the environment
 * variable carrying the URL. Absolute paths in [[hyperdrive]] are top-level whatever table precedes them in TOML,
 * so the binding is simply appended.
 */
export function mirrorDevConfig(root, databaseUrl) {
  const url = localMirrorUrl(databaseUrl);
  const base = readFileSync(join(root, "wrangler.toml"), "utf8");
  const generated = [
    `# Written by scripts/mirror-binding.mjs from wrangler.toml when ${MIRROR_URL_VARIABLE} is set; git-ignored, do not edit.`,
    base.trimEnd(),
    "",
    "# The Postgres mirror (docs/hasura.md); its local database comes from the environment.",
    "[[hyperdrive]]",
    `binding = "${BINDING}"`,
    'id = "local-mirror"',
    "",
  ].join("\n");
  // Written aside and renamed: a wrangler starting at that moment (the tests, another npm start) reads it whole.
  const aside = join(root, `${MIRROR_CONFIG}.${process.pid}.tmp`);
  writeFileSync(aside, generated);
  renameSync(aside, join(root, MIRROR_CONFIG));
  return {
    config: MIRROR_CONFIG,
    env: { [`CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_${BINDING}`]: url },
  };
}
