import { afterEach, describe, expect, it, vi } from "vitest";
import { CODE_CHALLENGE_PATTERN, codeVerifierSchema, verifierMatches } from "../../src/lib/pkce";

// RFC 7636 Appendix B.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

describe("PKCE, the one module every flow uses", () => {
  afterEach(() => vi.restoreAllMocks());

  it("matches RFC 7636's example and nothing else", async () => {
    expect(await verifierMatches(VERIFIER, CHALLENGE)).toBe(true);
    expect(await verifierMatches(`${VERIFIER.slice(0, -1)}l`, CHALLENGE)).toBe(false);
    expect(await verifierMatches(VERIFIER, `${CHALLENGE.slice(0, -1)}N`)).toBe(false);
    expect(CODE_CHALLENGE_PATTERN.test(CHALLENGE)).toBe(true);
  });

  it("refuses verifiers of the wrong shape before hashing (RFC 7636 §4.1: 43 to 128 unreserved characters)", async () => {
    const digest = vi.spyOn(crypto.subtle, "digest");
    expect(await verifierMatches(VERIFIER.slice(0, 42), CHALLENGE)).toBe(false);
    expect(await verifierMatches("a".repeat(129), CHALLENGE)).toBe(false);
    expect(await verifierMatches(`${VERIFIER.slice(0, -1)}+`, CHALLENGE)).toBe(false);
    expect(digest).not.toHaveBeenCalled();
    expect(codeVerifierSchema.safeParse("a".repeat(128)).success).toBe(true);
    expect(codeVerifierSchema.safeParse("a".repeat(42)).success).toBe(false);
  });

  it("compares the challenge in constant time (threat: a timing oracle on a stored challenge)", async () => {
    const compare = vi.spyOn(crypto.subtle, "timingSafeEqual");
    await verifierMatches(VERIFIER, `${CHALLENGE.slice(0, -1)}N`);
    expect(compare).toHaveBeenCalledTimes(1);
  });
});
