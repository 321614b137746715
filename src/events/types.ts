/**
 * The event stream's vocabulary (contract move-in §5). The events themselves are written by the database (triggers of
 * migration 0020) into `event_outbox`; these types are what the queue carries and consumers receive.
 */
export const EVENT_TYPES = [
  "user.created",
  "user.updated",
  "user.deleted",
  "session.created",
  "session.revoked",
  "password.changed",
  "email.verified",
  "file.uploaded",
  /** A file's name, type or metadata changed (beyond the contract's list: the mirror needs it). */
  "file.updated",
  "file.deleted",
  /** A run of the Nhost import finished (contract move-in §2; the import writes no per-user events). */
  "import.completed",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

/**
 * Types the queue carries that are not the public stream's: webhooks cannot subscribe to them and a consumer sees
 * them only if it names them (`EventConsumer.takes`). `audit.recorded`: one audit event, for its export to a
 * collector (src/audit-export/), written beside the audit row only while an export is set up.
 */
export const INTERNAL_EVENT_TYPES = ["audit.recorded"] as const;

export type InternalEventType = (typeof INTERNAL_EVENT_TYPES)[number];

export type StreamEventType = EventType | InternalEventType;

export const isInternalEventType = (value: string): value is InternalEventType =>
  (INTERNAL_EVENT_TYPES as readonly string[]).includes(value);

export const isStreamEventType = (value: string): value is StreamEventType =>
  isEventType(value) || isInternalEventType(value);

/** One event, as the EVENTS queue carries it. */
export interface StreamEvent {
  /** `evt_` and 32 hex digits, unique forever: consumers deduplicate on it. */
  id: string;
  type: StreamEventType;
  /** When the change was written, ISO 8601. */
  timestamp: string;
  /** Whose stream the event is in: a user's id, `file:<id>` for a file no user uploaded, `import` for the import's. */
  subject: string;
  /** 1, 2, 3, … per subject: queues do not keep order, consumers restore it with this. */
  sequence: number;
  /** `{user}`, `{session}` or `{file}`: snapshots without secrets (docs/events.md lists their fields). */
  data: Record<string, unknown>;
}

/** One webhook delivery to attempt, as the WEBHOOK_DELIVERIES queue carries it (src/webhooks/). */
export interface DeliveryMessage {
  deliveryId: string;
}
