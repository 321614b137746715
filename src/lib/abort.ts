/**
 * A promise that rejects when `signal` aborts, to race against every wait of an outbound call: not every fetcher
 * honours an abort (a service binding, a body stream already handed over), and an abort that only reaches the
 * fetcher escapes later as an unhandled error. It is never left unhandled itself, whichever side of the race wins.
 */
export function whenAborted(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => {});
  return aborted;
}
