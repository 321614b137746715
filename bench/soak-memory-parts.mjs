// What workerd's resident memory is made of, read from outside the process during `npm run soak` (issue 48: "find the
// cause of the drift and saw-tooth … with the profile or the counts that show it"). Linux only; each part is null
// where it cannot be read, and the soak goes on without it.
//
// - `anonymous` / `file`: /proc/<pid>/smaps_rollup's split of the resident set (file: the workerd binary's pages).
// - `isolates`: every V8 isolate of the process but ours (Miniflare's simulators of D1, R2, KV, Queues, the cache, its
//   entry Worker; on Cloudflare those are other machines), through workerd's own inspector, which lists each one.
//   Their committed heap (`totalSize`) is what the resident set holds for them; their live heap (`usedSize`) moves
//   with their collector. Ours is the soak's own heap line (live after a full GC, through Miniflare's proxy: a second
//   session on our isolate would stall the soak's).
// - The rest of the anonymous memory (the soak computes it, with our isolate's committed heap) is the runtime's own:
//   its allocator's (workerd links TCMalloc, which SQLite, the runtime's C++ and V8's off-heap memory use), WASM
//   memories, V8's code. Not read from inside the process: calling the allocator's counters through a debugger stops
//   workerd at an arbitrary point, and one such call crashed it (segmentation fault) in a soak (docs/performance.md).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const MB = 2 ** 20;

/** The TCP ports `pid` listens on (its socket inodes matched against /proc/net/tcp's listening entries). */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // local address (hex ip:port), state 0A = LISTEN, inode in field 9
    if (fields[3] === "0A" && inodes.has(fields[9])) ports.push(Number.parseInt(fields[1].split(":")[1], 16));
  }
  return ports;
}

/** workerd's own inspector: the listening port whose `/json/list` answers. Found once per run. */
async function rawInspector(pid) {
  for (const port of listeningPorts(pid)) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/json/list`, {
        signal: AbortSignal.timeout(2000),
      });
      if (response.ok) return { port, targets: await response.json() };
    } catch {
      // another listener (the Worker's own socket)
    }
  }
  return null;
}

/** One isolate's heap usage through its inspector target; null when it does not answer within 5 s. */
function heapOf(target) {
  return new Promise((resolve) => {
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    const done = (value) => {
      clearTimeout(timer);
      socket.close();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), 5000);
    socket.onopen = () => socket.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" }));
    socket.onmessage = (event) => done(JSON.parse(event.data).result ?? null);
    socket.onerror = () => done(null);
  });
}

/** Anonymous and file-backed resident memory, MB. */
function residentSplit(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN) / 1024;
  return { anonymous: kb("Anonymous"), file: kb("Pss_File") };
}

/**
 * A reader of the parts for one run: `read()` samples them. `ours` are the target ids the soak inspects itself, left
 * out here.
 */
export function memoryParts(pid, ours) {
  if (process.platform !== "linux" || pid === null) return { read: async () => null };
  let inspector;
  return {
    async read() {
      inspector ??= (await rawInspector(pid)) ?? { targets: [] };
      const others = inspector.targets.filter((target) => !ours.some((id) => target.id.endsWith(id)));
      const heaps = await Promise.all(others.map(heapOf));
      const answered = heaps.filter(Boolean);
      const isolates = {
        count: others.length,
        answered: answered.length,
        used: answered.reduce((sum, heap) => sum + heap.usedSize, 0) / MB,
        committed: answered.reduce((sum, heap) => sum + heap.totalSize, 0) / MB,
        largest: others
          .map((target, i) => ({ id: target.id, committed: (heaps[i]?.totalSize ?? 0) / MB }))
          .sort((a, b) => b.committed - a.committed)
          .slice(0, 3),
      };
      let split = null;
      try {
        split = residentSplit(pid);
      } catch {
        // no smaps_rollup (an old kernel)
      }
      return { ...split, isolates };
    },
  };
}

const f = (value) => (value === null || value === undefined ? "n/a" : `${value.toFixed(0)} MB`);

/** One line of the parts, for the soak's log. */
export function partsLine(parts) {
  if (!parts) return "memory by part: n/a on this platform";
  const { isolates } = parts;
  return [
    `memory by part: anonymous ${f(parts.anonymous)}, file ${f(parts.file)};`,
    `the local runtime's other isolates (${isolates.answered}/${isolates.count}) ${f(isolates.committed)} committed, ${f(isolates.used)} live`,
    `(largest ${isolates.largest.map((i) => `${i.id} ${f(i.committed)}`).join(", ")})`,
  ].join(" ");
}
