// Two scenarios measured against each other fairly on a noisy machine: in alternating short slices on the same
// instance (a b, b a, a b, …), so a change of the machine's speed during the run falls on both, and neither side
// always runs first. bench/run.mjs measures the Supabase face's rows this way against the Nhost face's (issue 43).
import { CONNECTIONS, DURATION, run } from "./lib.mjs";

/** Slices per side (`BENCH_ROUNDS`); each side runs about 2 × `BENCH_SECONDS` in all, split evenly. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `a` and `b` (each `{ name, options, before? }`: `before` runs untimed ahead of each of its slices, e.g. to top
 * up a pool of refresh tokens) in `rounds` rounds of one slice each, and answers each side as one result (requests
 * over seconds, summed over its slices; the median of its slices' p50 and p99; statuses summed) and the ratio b / a
 * of every round.
 *
 * A slice is a number of requests, not a time: every request of a slice is answered before the next slice starts, so
 * no work in flight spills into the other side's slice (a sign-in holds a connection for longer than a short slice
 * lasts on a loaded machine), and a pool of refresh tokens loses none. The number is side a's rate in an untimed
 * warm-up of both sides, times the slice's share of the time, at least two requests a connection.
 */
export async function paired(a, b, { rounds = ROUNDS, seconds = (2 * DURATION) / rounds } = {}) {
  const warmUp = async ({ name, options, before }) => {
    await before?.();
    const result = await run(`${name} (warm-up)`, { ...options, duration: Math.max(1, seconds) });
    await sleep(Math.max(250, result.p99));
    return result;
  };
  const rate = (await warmUp(a)).total / Math.max(1, seconds);
  await warmUp(b);
  const amount = Math.max(2 * CONNECTIONS, Math.round(rate * seconds));
  const slices = { a: [], b: [] };
  const once = async (side, { name, options, before }, round) => {
    await before?.();
    // autocannon notices the last answer at its next sample (every `sampleInt` ms, 1 s by default): at 1 s a slice's
    // length was whole seconds, and a round's ratio 0.5, 1 or 2.
    const result = await run(`${name} (round ${round + 1}/${rounds})`, { ...options, amount, sampleInt: 10 });
    slices[side].push(result);
    // Work the service does after its answers (waitUntil) finishes before the other side starts.
    await sleep(250);
  };
  const roundRatios = [];
  for (let round = 0; round < rounds; round++) {
    // a b, b a, a b, …: neither side always runs first.
    const order = round % 2 === 0 ? ["a", "b"] : ["b", "a"];
    for (const side of order) await once(side, side === "a" ? a : b, round);
    const [ra, rb] = [slices.a[round], slices.b[round]];
    roundRatios.push(rb.total / rb.seconds / (ra.total / ra.seconds));
  }
  return { a: combined(a.name, slices.a), b: combined(b.name, slices.b), roundRatios, amount };
}

const median = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** One side's slices as one result, in the shape of `run`'s. */
function combined(name, slices) {
  const sum = (key) => slices.reduce((total, slice) => total + slice[key], 0);
  const statuses = {};
  for (const slice of slices) {
    for (const [status, count] of Object.entries(slice.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
    }
  }
  return {
    name,
    rps: sum("total") / sum("seconds"),
    p50: median(slices.map((s) => s.p50)),
    p99: median(slices.map((s) => s.p99)),
    total: sum("total"),
    seconds: sum("seconds"),
    statuses,
    failures: sum("failures"),
    errors: sum("errors"),
    timeouts: sum("timeouts"),
  };
}

/** Each pair's line: the ratio of the totals against `goal`, and the spread of the rounds' own ratios. */
export function printPairs(title, pairs, goal) {
  console.log(`\n${title}\n`);
  console.log(
    "pair                                          b / a (totals)   rounds: median   min – max       b req/s   a req/s   slice",
  );
  for (const { a, b, roundRatios, amount } of pairs) {
    const ratio = b.rps / a.rps;
    const label = `${b.name.split(":")[0]} / ${a.name.split(":")[0]}`;
    console.log(
      `${label.padEnd(45)} ${ratio.toFixed(3).padStart(6)} ${ratio >= goal ? "met   " : "missed"}    ${median(roundRatios).toFixed(3).padStart(6)}   ${Math.min(...roundRatios).toFixed(3)} – ${Math.max(...roundRatios).toFixed(3)}   ${b.rps.toFixed(0).padStart(7)}   ${a.rps.toFixed(0).padStart(7)}   ${amount} requests`,
    );
  }
}
