import type { Catalogue } from "../../browser/text";
import type { AccountSecurity } from "../../browser/text/en/account-security";
import { AppError, RateLimitedError } from "../../errors";

/** The security sections' words around the catalogue: notices after a change, refusals, dates. */

type Words = AccountSecurity;

/** The notices this folder passes to `backToAccount`; every key starts with `security-`, the frame's never do. */
const NOTICES = {
  "security-totp-enabled": (w: Words) => w.notices.totpEnabled,
  "security-totp-disabled": (w: Words) => w.notices.totpDisabled,
  "security-passkey-added": (w: Words) => w.notices.passkeyAdded,
  "security-passkey-removed": (w: Words) => w.notices.passkeyRemoved,
  "security-token-revoked": (w: Words) => w.notices.tokenRevoked,
  "security-provider-linked": (w: Words) => w.notices.providerLinked,
  "security-provider-unlinked": (w: Words) => w.notices.providerUnlinked,
  "security-provider-failed": (w: Words) => w.errors.providerFailed,
  "security-provider-taken": (w: Words) => w.errors.providerTaken,
  "security-org-left": (w: Words) => w.notices.orgLeft,
  "security-last-way": (w: Words) => w.errors.lastWay,
  "security-last-owner": (w: Words) => w.errors.lastOwner,
  "security-gone": (w: Words) => w.errors.gone,
  "security-unavailable": (w: Words) => w.errors.unavailable,
} satisfies Record<`security-${string}`, (w: Words) => string>;

export type Notice = keyof typeof NOTICES;

/** Words for a notice key from the page's query, or undefined when it is not one of ours. */
export function securityNotice(catalogue: Catalogue, key: string): string | undefined {
  // The choice of second step keeps its words apart (second-step-choice.ts).
  if (key === "security-second-step-changed") return catalogue.secondStep.changed;
  const words = (NOTICES as Record<string, (w: Words) => string>)[key];
  return words?.(catalogue.accountSecurity);
}

/**
 * What to tell the person when a service call refused: the API's own checks (a wrong code, the per-user guess cap,
 * a switched-off feature) in the page's words. Undefined for anything the page does not expect: the caller rethrows
 * it (a 5xx stays a 5xx, handled like everywhere else).
 */
export function refusal(w: Words, error: unknown): string | undefined {
  if (error instanceof RateLimitedError) return w.errors.tooManyCodes;
  if (!(error instanceof AppError) || error.status >= 500) return undefined;
  switch (error.code) {
    case "invalid-totp":
      return w.errors.wrongCode;
    case "no-totp-secret":
      return w.errors.setupExpired;
    case "totp-already-active":
      return w.errors.alreadyOn;
    case "disabled-mfa-totp":
      return w.errors.notOn;
    case "disabled-endpoint":
      return w.errors.unavailable;
    default:
      return undefined;
  }
}

/** A date as the reader writes it (the day is enough here; UTC, as the server knows no time zone of the reader). */
export function formatDate(lang: string, ms: number): string {
  try {
    return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeZone: "UTC" }).format(ms);
  } catch {
    return new Date(ms).toISOString().slice(0, 10);
  }
}
