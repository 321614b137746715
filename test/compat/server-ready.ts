// Set-up of every compat file: waits until the shared server is up. The global setup (wrangler-dev.ts) starts it in
// the background, beside the other projects' tests, and writes the ready file when the server and the example MCP
// server answer, or what failed, which then fails each file with that message rather than a refused connection.
import { existsSync, readFileSync } from "node:fs";
import { inject } from "vitest";

const file = inject("serverReadyFile");
const deadline = Date.now() + 300_000;
while (!existsSync(file)) {
  if (Date.now() > deadline) throw new Error("the compat server was not ready after five minutes");
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const state = readFileSync(file, "utf8");
if (state !== "ready") throw new Error(state);
