// CPU time of the processes an import bench drives, for benches run on a shared machine: wall time there says how busy
// the machine was, CPU time what the import cost (bench/import-users.mjs, bench/import-supabase.mjs).

import { readdirSync, readFileSync } from "node:fs";

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every architecture Node runs on. */
const TICKS = 100;

/** The pids of a process's children (every thread's), or null where there is no /proc. */
function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean),
    );
  } catch {
    return pid === "self" ? null : [];
  }
}

/** `[command name, CPU ticks]` of one process: user + system, its reaped children's included; null once gone. */
function statOf(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces, so the fields are counted from its closing parenthesis.
  const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime, stime, cutime, cstime: fields 14–17 of proc(5), 11–14 counted from the state after comm.
  return [comm, [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0)];
}

/**
 * CPU seconds (user + system) of this process's children whose command name is `name` (`workerd`, Miniflare's;
 * `postgres`, test/support/postgres.ts's server) and of all their descendants, live or reaped (Postgres's sessions are
 * the server's children): null where there is no /proc. Read before and after a run, the difference is what the run
 * cost them.
 */
export function childrenCpu(name) {
  const top = childrenOf("self");
  if (top === null) return null;
  let ticks = 0;
  const walk = (pid) => {
    const stat = statOf(pid);
    if (stat === null) return; // exited meanwhile
    ticks += stat[1];
    for (const child of childrenOf(pid)) walk(child);
  };
  for (const pid of top) if (statOf(pid)?.[0] === name) walk(pid);
  return ticks / TICKS;
}

/**
 * A `--import` preload for a child command that writes its own peak RSS (kB) and CPU seconds to fd 3 when it exits
 * (process.exit included): `{maxRSS, cpu}`.
 */
export const USAGE_PRELOAD = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs";' +
    'process.on("exit", () => { try { const u = process.resourceUsage(); writeSync(3, JSON.stringify({ maxRSS: u.maxRSS, cpu: (u.userCPUTime + u.systemCPUTime) / 1e6 })); } catch {} });',
)}`;
