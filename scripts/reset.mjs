// `npm run reset`: forgets the local state of `npm start` (D1, KV, R2, Durable Objects under .wrangler/state), so the
// next `npm start` begins with empty storage and fresh migrations. .dev.vars (the local secrets) stays; add
// --secrets to regenerate those too.
import { existsSync, rmSync } from "node:fs";

const STATE = ".wrangler/state";
if (existsSync(STATE)) {
  rmSync(STATE, { recursive: true, force: true });
  console.log(`reset: removed ${STATE} (local D1, KV, R2 and Durable Objects)`);
} else {
  console.log(`reset: no ${STATE} here, nothing to remove`);
}
if (process.argv.includes("--secrets") && existsSync(".dev.vars")) {
  rmSync(".dev.vars");
  console.log("reset: removed .dev.vars; `npm start` writes new secrets");
}
