// First step of `npm start`: makes sure .dev.vars (git-ignored) holds local secrets, generating any that are missing.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { DEVELOPMENT_VARS, generateSecrets, toEnvLines } from "./secrets.mjs";

const FILE = ".dev.vars";
const current = existsSync(FILE) ? readFileSync(FILE, "utf8") : "";
const present = new Set(
  current
    .split("\n")
    .map((line) => line.split("=")[0]?.trim())
    .filter(Boolean),
);
const wanted = { ...generateSecrets(), ...DEVELOPMENT_VARS };
const missing = Object.entries(wanted).filter(([name]) => !present.has(name));
if (missing.length > 0) {
  const lines = toEnvLines(Object.fromEntries(missing));
  const prefix = current && !current.endsWith("\n") ? "\n" : "";
  writeFileSync(FILE, `${current}${prefix}${lines.join("\n")}\n`, { mode: 0o600 });
  console.log(`dev-setup: wrote ${missing.map(([n]) => n).join(", ")} to ${FILE}`);
}

/** A variable as the local server will see it: .dev.vars first, then wrangler.toml's top-level [vars]. */
function effective(name, fallback) {
  const fromDevVars = new RegExp(`^${name}\\s*=\\s*['"]?([^'"\\n]*)`, "m").exec(readFileSync(FILE, "utf8"));
  if (fromDevVars) return fromDevVars[1];
  const toml = readFileSync("wrangler.toml", "utf8");
  const topVars = toml.slice(toml.indexOf("[vars]"), toml.indexOf("[env."));
  return new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, "m").exec(topVars)?.[1] ?? fallback;
}

const issuer = effective("AUTH_SERVER_URL", "http://localhost:8787/auth/v1").replace(/\/$/, "");
const { origin, pathname } = new URL(issuer);
const registration = effective("AUTH_OAUTH2_PROVIDER_REGISTRATION", "off");
console.log(
  [
    "dev-setup: OAuth2 / OpenID Connect for apps, CLIs and MCP hosts (docs/oauth2.md):",
    `  issuer        ${issuer}`,
    `  discovery     ${origin}/.well-known/oauth-authorization-server${pathname}`,
    `  registration  ${registration}${registration === "open" ? ` (anyone: POST ${issuer}/oauth2/register)` : ""}`,
    `  device code   ${issuer}/oauth2/device`,
    '  your own app  npm run oauth2:client -- --name "My App" --redirect-uri http://localhost:3000/callback',
    'dev-setup: users, sessions, signing keys and the audit log: npm run admin (README "Admin API")',
  ].join("\n"),
);
