// A wrangler configuration file as written (no defaults, no environment merged), for the scripts that only read it.
// wrangler's own reader (`experimental_readRawConfig`) loads all of wrangler to do it: 2.5 s of CPU and up to 7 s on
// a busy 2-core machine, for every `npm run deploy -- --check` (the suite runs it about thirty times). A TOML file is
// parsed with smol-toml, the parser wrangler itself bundles (the same version), so both read the same values; any
// other format (wrangler.json, wrangler.jsonc) still goes through wrangler.
import { readFileSync } from "node:fs";
import { parse } from "smol-toml";

/** `{ rawConfig }`, as wrangler's `experimental_readRawConfig({ config })` answers. */
export async function readRawConfig(config) {
  if (config.endsWith(".toml")) return { rawConfig: parse(readFileSync(config, "utf8")) };
  const { experimental_readRawConfig } = await import("wrangler");
  return experimental_readRawConfig({ config });
}
