// The production secrets: which are set on the Worker already, which the operator's secrets file brings, and which
// the deploy generates (scripts/secrets.mjs, as `npm start` and `npm run secrets:production` do). Only secrets not set
// yet are uploaded, with the Worker's deploy (wrangler deploy --secrets-file: additive, the others are kept): a second
// run uploads nothing, and AUTH_ENCRYPTION_KEY, which seals stored values, is never replaced by a deploy.
import { readFileSync } from "node:fs";
import { generateSecrets } from "../secrets.mjs";

/** What the operator must keep from a generated set: Cloudflare never shows a secret again. */
const TO_KEEP = {
  AUTH_ADMIN_SECRET: "opens the admin API and the console (npm run admin with ADMIN_SECRET)",
  AUTH_ENCRYPTION_KEY:
    "seals TOTP secrets, provider tokens and rotated keys: needed to move or restore the data",
  AUTH_SUPABASE_PUBLISHABLE_KEYS: "supabase-js's key, for apps of the Supabase face (docs/supabase.md)",
  AUTH_SUPABASE_SECRET_KEYS: "the Supabase face's server key",
};

/** A secrets file's values: JSON (`npm run secrets:production`) or NAME=value lines. */
export function readSecretsFile(file) {
  const text = readFileSync(file, "utf8");
  try {
    return JSON.parse(text);
  } catch {
    const values = {};
    for (const line of text.split("\n")) {
      const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
      if (match) values[match[1]] = match[2].replace(/^(['"])(.*)\1$/, "$2");
    }
    return values;
  }
}

/**
 * The secrets set on the deployed Worker: names, [] when the Worker does not exist yet (a first deploy), or throws
 * (not logged in, no network) with wrangler's message.
 */
export function deployedSecretNames(wrangler, { config, env }) {
  const listed = wrangler(["secret", "list", "--env", env, "-c", config, "--format", "json"], {
    capture: true,
  });
  if (listed.status !== 0) {
    if (/not found|does not exist/i.test(listed.stderr + listed.stdout)) return [];
    throw new Error(`cannot ask Cloudflare: ${(listed.stderr || listed.stdout).trim().split("\n")[0]}`);
  }
  const start = listed.stdout.search(/^\s*\[/m);
  return JSON.parse(listed.stdout.slice(start)).map((secret) => secret.name);
}

/** Every secret the service is given: wrangler.toml's required ones and those scripts/secrets.mjs makes. */
let generatedNames;
export function serviceSecretNames(required) {
  generatedNames ??= Object.keys(generateSecrets());
  return [...new Set([...required, ...generatedNames])];
}

/**
 * What to upload: the file's secrets not set on the Worker, then a generated value for every service secret neither
 * has. `deployed` null: unknown (a plan without Cloudflare), every secret not in the file counts as to generate.
 */
export function secretsPlan({ required, deployed, fileValues }) {
  const set = new Set(deployed ?? []);
  const fromFile = Object.keys(fileValues ?? {}).filter((name) => !set.has(name));
  const skipped = Object.keys(fileValues ?? {}).filter((name) => set.has(name));
  const absent = serviceSecretNames(required).filter((name) => !set.has(name) && !fromFile.includes(name));
  // A required secret of the operator's own (AUTH_SMTP_PASS…) cannot be made up: it is refused, as before.
  const toGenerate = absent.filter((name) => generatedNames.includes(name));
  const missing = absent.filter((name) => !generatedNames.includes(name));
  return { fromFile, skipped, toGenerate, missing, alreadySet: [...set] };
}

/** The values to upload for a plan: the file's, and fresh ones generated now. */
export function secretValues(plan, fileValues) {
  const fresh = generateSecrets();
  return {
    ...Object.fromEntries(plan.fromFile.map((name) => [name, fileValues[name]])),
    ...Object.fromEntries(plan.toGenerate.map((name) => [name, fresh[name]])),
  };
}

/** The lines printed once after the deploy: each generated secret the operator must keep, with why. */
export function secretsToKeep(plan, values) {
  return plan.toGenerate
    .filter((name) => TO_KEEP[name])
    .map((name) => `  ${name}=${values[name]}\n      ${TO_KEEP[name]}`);
}
