/**
 * Text colours that stay readable on and beside a brand colour an operator picks (contract §13): WCAG 2.2's relative
 * luminance and contrast ratio (SC 1.4.3, "Contrast (Minimum)": 4.5:1 for text), and two derivations from them.
 * Pure functions of `#rrggbb` strings; no I/O.
 */

/** WCAG 1.4.3's minimum contrast for normal text. */
export const MIN_TEXT_CONTRAST = 4.5;

/** A colour as the pages write it: `#` and six hex digits. */
export const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

type Rgb = [number, number, number];

function parse(hex: string): Rgb {
  if (!HEX_COLOUR.test(hex)) throw new TypeError(`not a #rrggbb colour: ${hex}`);
  return [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)) as Rgb;
}

const format = (rgb: Rgb) =>
  `#${rgb.map((channel) => Math.round(channel).toString(16).padStart(2, "0")).join("")}`;

/** WCAG 2.2 "relative luminance": sRGB channels linearised, weighted 0.2126 / 0.7152 / 0.0722. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = parse(hex).map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.2 "contrast ratio": (L1 + 0.05) / (L2 + 0.05), the lighter over the darker; 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [lighter, darker] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (lighter + 0.05) / (darker + 0.05);
}

/**
 * The label colour of a button filled with `background`: white, as brands' buttons usually have it, whenever white
 * reaches 4.5:1; else black, which then always does (the two ratios multiply to 21, so when white gives less than
 * 4.5, black gives more than 4.67).
 */
export function textOn(background: string): "#000000" | "#ffffff" {
  return contrastRatio(background, "#ffffff") >= MIN_TEXT_CONTRAST ? "#ffffff" : "#000000";
}

/**
 * The brand colour as link text on `page`: the colour itself when it already reaches 4.5:1 against the page, else the
 * least darkened (on a light page) or lightened (on a dark one) shade of it that does, so links keep the brand's hue.
 */
export function readableOn(colour: string, page: string): string {
  if (contrastRatio(colour, page) >= MIN_TEXT_CONTRAST) return colour;
  const from = parse(colour);
  const toward: Rgb = relativeLuminance(page) > 0.18 ? [0, 0, 0] : [255, 255, 255];
  // 1% steps toward black or white, each checked after rounding to hex; black and white both pass on any page
  // this is asked about (the pages' own backgrounds), so the loop ends with a readable shade.
  for (let step = 1; step <= 100; step++) {
    const shade = format(from.map((channel, i) => channel + (toward[i]! - channel) * (step / 100)) as Rgb);
    if (contrastRatio(shade, page) >= MIN_TEXT_CONTRAST) return shade;
  }
  return format(toward);
}
