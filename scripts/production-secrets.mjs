// `npm run secrets:production`: writes fresh production secrets (a signing key, the encryption key, the admin secret)
// to production.secrets.json (git-ignored, mode 600), which `npm run deploy` uploads with the Worker. It
// never overwrites an existing file: rotating AUTH_ENCRYPTION_KEY would make every sealed value unreadable.
import { existsSync, writeFileSync } from "node:fs";
import { generateSecrets } from "./secrets.mjs";

const FILE = "production.secrets.json";
if (existsSync(FILE)) {
  console.error(
    `secrets:production: ${FILE} exists already; upload it, or delete it first to generate new secrets`,
  );
  process.exit(1);
}
writeFileSync(FILE, `${JSON.stringify(generateSecrets(), null, 2)}\n`, { mode: 0o600 });
console.log(`secrets:production: wrote ${FILE}. \`npm run deploy\` uploads it with the Worker (or, for a Worker
that exists already: npx wrangler secret bulk ${FILE} --env production). Then keep it somewhere safe (not in git) or
delete it.

AUTH_ENCRYPTION_KEY seals TOTP secrets, PKCE verifiers, provider tokens and rotated signing keys: keep it. The
admin secret opens the admin API (npm run admin -- … with ADMIN_SECRET set).`);
