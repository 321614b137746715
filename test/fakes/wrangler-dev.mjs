#!/usr/bin/env node
// A stand-in for the wrangler command `npm start` runs (scripts/start.mjs, EDGE_AUTH_WRANGLER), for the one case of
// test/compat/start-script.test.ts where the Worker refuses its settings: without it, that case cost a whole wrangler
// dev start-up (about 19 s of CPU) to see one log line. It answers as wrangler 4 and the Worker do there:
// - `dev … --port N`: a server on localhost:N whose every request is refused as src/index.ts refuses it when
//   src/config.ts throws — the line `{"level":"error","what":"config","detail":…}` on stderr (console.error's
//   output, which wrangler dev passes through as written) and a 500 — with the refusal in FAKE_CONFIG_REFUSAL.
// That the Worker logs exactly this line is test/config.test.ts's ("the Worker refusing its settings"); the real
// wrangler dev is started by the same file's other case.
import { createServer } from "node:http";

const argv = process.argv.slice(2);
const option = (name) => argv[argv.indexOf(name) + 1];

if (argv[0] !== "dev") {
  process.stderr.write(`✘ [ERROR] the stand-in wrangler runs only \`dev\`\n`);
  process.exit(1);
}
const detail = process.env.FAKE_CONFIG_REFUSAL ?? "invalid configuration";
const server = createServer((_request, response) => {
  console.error(JSON.stringify({ level: "error", what: "config", detail }));
  response.writeHead(500, { "content-type": "application/json" });
  response.end(
    JSON.stringify({ status: 500, message: "internal server error", error: "internal-server-error" }),
  );
});
server.listen(Number(option("--port")), "localhost", () =>
  process.stdout.write(`[wrangler:info] Ready on http://localhost:${option("--port")}\n`),
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
