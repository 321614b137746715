// `npm test` and `npm run test:quick`, first step: the typecheck and the lint at once, one core each (on a 2-core
// machine that is 13 s instead of 20 s one after the other). Each one's output is printed whole when it ends, so the
// two never interleave; the step fails if either does, after both have said why.
import { spawn } from "node:child_process";

const run = (script) =>
  new Promise((resolve) => {
    // npm's own CLI under this Node when npm started us (as `npm test` does): no shell, on every platform.
    const npm = process.env.npm_execpath;
    const child = npm
      ? spawn(process.execPath, [npm, "run", "-s", script], { stdio: ["ignore", "pipe", "pipe"] })
      : spawn("npm", ["run", "-s", script], { stdio: ["ignore", "pipe", "pipe"], shell: true });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (code) => {
      process.stdout.write(`> npm run ${script}: ${code === 0 ? "ok" : `failed (${code})`}\n${output}`);
      resolve(code === 0);
    });
  });

const passed = await Promise.all([run("typecheck"), run("lint")]);
process.exit(passed.every(Boolean) ? 0 : 1);
