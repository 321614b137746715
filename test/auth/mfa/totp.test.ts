import { decode as decodePng } from "fast-png";
import jsQR from "jsqr";
import { describe, expect, it } from "vitest";
import { qrPngDataUrl } from "../../../src/auth/mfa/qr-png";
import { matchTotp, totpCode, totpStep, totpUri } from "../../../src/auth/mfa/totp";

// RFC 6238 Appendix B, SHA-1: the 8-digit values' last six digits are the 6-digit codes.
const RFC_SECRET = new TextEncoder().encode("12345678901234567890");
const RFC_VECTORS: [number, string][] = [
  [59, "287082"],
  [1111111109, "081804"],
  [1111111111, "050471"],
  [1234567890, "005924"],
  [2000000000, "279037"],
  [20000000000, "353130"],
];

describe("TOTP (fixed clock)", () => {
  it.each(RFC_VECTORS)("at %i s the code is %s (RFC 6238 test vector)", (seconds, code) => {
    expect(totpCode(RFC_SECRET, totpStep(seconds * 1000))).toBe(code);
    expect(matchTotp(RFC_SECRET, code, seconds * 1000)).toBe(totpStep(seconds * 1000));
  });

  it("accepts one step of drift either way and no more", () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    for (const offset of [-1n, 0n, 1n]) {
      expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + offset), now)).toBe(step + offset);
    }
    for (const offset of [-2n, 2n]) {
      expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + offset), now)).toBeNull();
    }
  });

  it("refuses anything that is not six digits", () => {
    expect(matchTotp(RFC_SECRET, "28708", 59_000)).toBeNull();
    expect(matchTotp(RFC_SECRET, "2870820", 59_000)).toBeNull();
    expect(matchTotp(RFC_SECRET, " 287082", 59_000)).toBeNull();
  });
});

describe("QR code image", () => {
  it("is a PNG data URL that decodes back to the otpauth URI", () => {
    const uri = totpUri("Acme Auth", "ana@example.com", RFC_SECRET);
    expect(uri).toMatch(/^otpauth:\/\/totp\/Acme%20Auth:ana%40example\.com\?/);
    const url = qrPngDataUrl(uri);
    expect(url).toMatch(/^data:image\/png;base64,/);
    const png = decodePng(Uint8Array.from(atob(url.split(",")[1]!), (c) => c.charCodeAt(0)));
    const rgba = new Uint8ClampedArray(png.width * png.height * 4);
    for (let i = 0; i < png.width * png.height; i++) {
      const grey = png.data[i * png.channels]!;
      rgba.set([grey, grey, grey, 255], i * 4);
    }
    expect(jsQR(rgba, png.width, png.height)?.data).toBe(uri);
  });
});
