/**
 * Memos that outlive a request (module level, shared by every request an isolate serves) hold settled values only.
 *
 * Why: Workers forbid one request from touching another's I/O objects, and a promise is not neutral ground. When
 * request B awaits a promise that request A created and A's I/O settles it, B resumes inside A's context; whatever
 * B creates next (its response body stream, say) belongs to A, and B's answer fails with "Cannot perform I/O on
 * behalf of a different request" (measured: ~0.1 % of session checks under 32 concurrent clients while the key set
 * was re-read every 10 s). So a request that misses computes the value itself and publishes it once settled; two
 * requests that miss at the same moment both compute, and either result is as good as the other.
 */

/** A keyed memo of settled values, at most `limit` entries (the oldest goes first). */
export function settledMemo<K, V>(limit = 64) {
  const values = new Map<K, V>();
  return {
    async get(key: K, compute: () => Promise<V>): Promise<V> {
      const hit = values.get(key);
      if (hit !== undefined) return hit;
      const value = await compute();
      if (!values.has(key) && values.size >= limit) values.delete(values.keys().next().value as K);
      values.set(key, value);
      return value;
    },
    delete(key: K): void {
      values.delete(key);
    },
  };
}

/** One settled value for the isolate, computed by the first request(s) that need it. */
export function settledOnce<V>(compute: () => Promise<V>): () => Promise<V> {
  let value: V | undefined;
  return async () => {
    if (value === undefined) value = await compute();
    return value;
  };
}

/**
 * A keyed memo whose entries are trusted for `ttlMs` (by the caller's clock), at most `limit` of them: rows that
 * change rarely and whose change may show in other isolates a little late. A miss or a stale entry is read again by
 * the request that finds it; `delete` makes this isolate read again at once after a change it made.
 */
export function settledCache<K, V>(ttlMs: number, limit = 256) {
  const entries = new Map<K, { value: V; at: number }>();
  return {
    async get(key: K, now: number, compute: () => Promise<V | undefined>): Promise<V | undefined> {
      const hit = entries.get(key);
      if (hit && now - hit.at < ttlMs) return hit.value;
      const value = await compute();
      entries.delete(key);
      if (value === undefined) return undefined;
      if (entries.size >= limit) entries.delete(entries.keys().next().value as K);
      entries.set(key, { value, at: now });
      return value;
    },
    delete(key: K): void {
      entries.delete(key);
    },
  };
}
