// The brand's colours and the text colours derived from them (contract §13, WCAG 2.2 SC 1.4.3). Threat: an operator
// picks a brand colour (a pale yellow, a deep navy) that leaves button labels or links unreadable, so the sign-in page
// fails people with low vision and the accessibility checks (4.5:1 for text); and a logo URL that loads an image
// from anywhere but an https origin (or this machine in development), or CSS text smuggled in as a colour.
import { describe, expect, it } from "vitest";
import {
  brandColourSchema,
  brandLogoUrlSchema,
  brandPalettes,
  brandStyle,
  DARK_SURFACE,
  imageOrigin,
  LIGHT_SURFACE,
} from "../../src/lib/brand";
import {
  contrastRatio,
  MIN_TEXT_CONTRAST,
  readableOn,
  relativeLuminance,
  textOn,
} from "../../src/lib/brand-colours";

const PALE = "#ffeb3b";
const DEEP = "#1a237e";
const MID = "#1a73e8";

/** Every 17th value of each channel: 4,096 colours from black to white. */
const GRID = Array.from({ length: 16 ** 3 }, (_, i) => {
  const channel = (shift: number) => (((i >> shift) & 15) * 17).toString(16).padStart(2, "0");
  return `#${channel(8)}${channel(4)}${channel(0)}`;
});

describe("WCAG relative luminance and contrast", () => {
  it("matches the definition's fixed points and a known pair", () => {
    expect(relativeLuminance("#000000")).toBe(0);
    expect(relativeLuminance("#ffffff")).toBeCloseTo(1, 10);
    expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21, 10);
    expect(contrastRatio("#ffffff", "#000000")).toBeCloseTo(21, 10);
    expect(contrastRatio(MID, MID)).toBe(1);
    // #767676 is the lightest grey that passes on white (4.54:1); #777777 just fails (4.48:1).
    expect(contrastRatio("#767676", "#ffffff")).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    expect(contrastRatio("#777777", "#ffffff")).toBeLessThan(MIN_TEXT_CONTRAST);
  });

  it("refuses what is not #rrggbb", () => {
    for (const bad of ["red", "#fff", "#12345g", "#1a73e8;}", ""]) {
      expect(() => relativeLuminance(bad), bad).toThrow(TypeError);
    }
  });
});

describe("text colours derived from a brand colour", () => {
  it("labels a button black or white, whichever reads: black on pale yellow, white on navy and on mid blue", () => {
    expect(textOn(PALE)).toBe("#000000");
    expect(textOn(DEEP)).toBe("#ffffff");
    expect(textOn(MID)).toBe("#ffffff");
  });

  it("every colour gets a button label of at least 4.5:1", () => {
    const unreadable = GRID.filter((colour) => contrastRatio(colour, textOn(colour)) < MIN_TEXT_CONTRAST);
    expect(unreadable).toEqual([]);
  });

  it("keeps a brand colour for links when it already reads, and shades it (same hue) when it does not", () => {
    expect(readableOn(DEEP, "#ffffff")).toBe(DEEP);
    const darkened = readableOn(PALE, "#ffffff");
    expect(darkened).not.toBe(PALE);
    expect(contrastRatio(darkened, "#ffffff")).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    // Toward black keeps the channels' order: still a yellow (red and green above blue).
    const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(darkened.slice(at, at + 2), 16));
    expect(r! > b! && g! > b!).toBe(true);
    const lightened = readableOn(DEEP, DARK_SURFACE);
    expect(relativeLuminance(lightened)).toBeGreaterThan(relativeLuminance(DEEP));
    expect(contrastRatio(lightened, DARK_SURFACE)).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
  });

  it("every colour gets links of at least 4.5:1 on light and dark pages, inside the tinted boxes too", () => {
    // Light: white and the error box's tint; dark: browsers' dark Canvas (Chromium #121212, Firefox #1c1b22) and the
    // dark surface the shades are made for. Collected, then checked once: 4,096 colours × 5 pages.
    const unreadable: string[] = [];
    for (const colour of GRID) {
      const { light, dark } = brandPalettes({ color: colour })!;
      for (const page of ["#ffffff", LIGHT_SURFACE]) {
        if (contrastRatio(light.accent, page) < MIN_TEXT_CONTRAST) unreadable.push(`${colour} on ${page}`);
      }
      for (const page of ["#121212", "#1c1b22", DARK_SURFACE]) {
        if (contrastRatio(dark.accent, page) < MIN_TEXT_CONTRAST) unreadable.push(`${colour} on ${page}`);
      }
    }
    expect(unreadable).toEqual([]);
  });
});

describe("the brand's CSS and values", () => {
  it("writes nothing without a colour, and both schemes with one (the dark one from the light when not given)", () => {
    expect(brandStyle({})).toBe("");
    expect(brandStyle({ name: "Acme" })).toBe("");
    const pale = brandStyle({ color: PALE });
    expect(pale).toContain(`--brand: ${PALE}; --on-brand: #000000;`);
    expect(pale).toMatch(
      /@media \(prefers-color-scheme: dark\) \{ :root \{ --brand: #ffeb3b; --on-brand: #000000;/,
    );
    const both = brandPalettes({ color: MID, colorDark: "#8ab4f8" })!;
    expect(both.light.brand).toBe(MID);
    expect(both.dark).toEqual({ brand: "#8ab4f8", onBrand: "#000000", accent: "#8ab4f8" });
  });

  it("takes only #rrggbb colours and https (or loopback http) logos", () => {
    const colour = brandColourSchema("#1a73e8");
    expect(colour.safeParse(MID).success).toBe(true);
    for (const bad of ["red", "#fff", "#1a73e8; background: url(https://evil.example)", "1a73e8"]) {
      expect(colour.safeParse(bad).success, bad).toBe(false);
    }
    expect(imageOrigin("https://cdn.example.com/brand/logo.svg")).toBe("https://cdn.example.com");
    expect(imageOrigin("http://localhost:5173/logo.png")).toBe("http://localhost:5173");
    expect(imageOrigin("http://127.0.0.1/logo.png")).toBe("http://127.0.0.1");
    for (const bad of [
      "http://example.com/logo.png",
      "http://localhost.evil.example/logo.png",
      "javascript:alert(1)",
      "data:image/svg+xml,<svg/>",
      "https://user:secret@cdn.example.com/logo.png",
      "not a url",
    ]) {
      expect(imageOrigin(bad), bad).toBeUndefined();
      expect(brandLogoUrlSchema.safeParse(bad).success, bad).toBe(false);
    }
    expect(brandLogoUrlSchema.safeParse(`https://cdn.example.com/${"a".repeat(2048)}`).success).toBe(false);
  });
});
