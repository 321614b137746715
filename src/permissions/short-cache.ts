import { stillFresh } from "./active-set";

/**
 * A small per-isolate cache of settled values, each trusted for FRESHNESS_MS after the read that made it began, at
 * most `size` entries (the oldest written leaves first). For the subjects' and resources' rows a check reads: a busy
 * subject costs D1 one read a second per isolate, and a change is seen within that second.
 */
export class ShortCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(private readonly size: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (stillFresh(entry.at, now)) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, at: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at });
    if (this.entries.size > this.size) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
