/**
 * What a request has shown about its sender, kept on it (`Deps.visitor`) for its whole length: one solved Turnstile
 * challenge serves the request (tokens are single use), and it counts once in the sign-up limit (sign-up-gate.ts).
 */

/** The header Nhost's clients send the Turnstile widget's token in (contract §9). */
export const TURNSTILE_HEADER = "x-cf-turnstile-response";

/** What a request has shown about its sender, kept for the length of the request. */
export interface Visitor {
  /** The Turnstile token the request carries (`x-cf-turnstile-response`), if any. */
  readonly turnstileToken: string | null;
  /** The client address (`cf-connecting-ip`). */
  readonly address: string | null;
  /** A Turnstile challenge was passed in this request. */
  passedChallenge: boolean;
  /** The request was counted in the `SIGNUPS` bucket. */
  countedSignUp: boolean;
}

export function visitorOf(headers: { get(name: string): string | null }): Visitor {
  return {
    turnstileToken: headers.get(TURNSTILE_HEADER)?.trim() || null,
    address: headers.get("cf-connecting-ip"),
    passedChallenge: false,
    countedSignUp: false,
  };
}
