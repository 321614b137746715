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

console.log(
  "dev-setup: the OAuth2 / OpenID Connect provider is on. Create a client once the server runs:\n" +
    '  npm run oauth2:client -- --name "My App" --redirect-uri http://localhost:3000/callback\n' +
    'dev-setup: users, sessions, signing keys and the audit log: npm run admin (README "Admin API")',
);
