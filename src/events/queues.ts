/**
 * The queues of wrangler.toml, by name: a Worker's `queue` handler receives the batches of every queue it consumes,
 * and tells them apart by `batch.queue`. Renaming a queue means renaming it here too.
 */
export const QUEUES = {
  events: "edge-auth-events",
  deliveries: "edge-auth-webhook-deliveries",
  /** Back-channel logout tokens to post (src/oauth2/logout/backchannel-delivery.ts). */
  logoutDeliveries: "edge-auth-logout-deliveries",
  deadLetters: "edge-auth-dead-letters",
} as const;

export type QueueRole = keyof typeof QUEUES;

/** Which of our queues a batch came from; null for a name this deployment does not know. */
export function queueRole(name: string): QueueRole | null {
  for (const [role, queue] of Object.entries(QUEUES) as [QueueRole, string][]) {
    if (queue === name) return role;
  }
  return null;
}
