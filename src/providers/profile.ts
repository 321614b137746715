/** Who a provider says the user is, in the service's terms (contract §7). */
export interface ProviderProfile {
  /** The provider's stable user id, as a string. */
  id: string;
  email?: string;
  /** True only when the provider itself says the address is verified: only then may it find an existing account. */
  emailVerified: boolean;
  displayName?: string;
  avatarUrl?: string;
  locale?: string;
}

/** A JSON answer read defensively: providers answer shapes the service does not control. */
export type Json = Record<string, unknown>;

export const str = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : typeof value === "number" ? String(value) : undefined;

export const obj = (value: unknown): Json =>
  typeof value === "object" && value !== null ? (value as Json) : {};

/** `true`, or the string "true" (Apple sends booleans as strings). */
export const yes = (value: unknown): boolean => value === true || value === "true";
