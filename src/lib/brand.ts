import { z } from "zod";
import { HEX_COLOUR, readableOn, textOn } from "./brand-colours";
import { isLoopbackHost } from "./loopback";

/**
 * The brand of the built-in pages (contract §13): a name, a logo and a colour for light and dark pages. The same
 * rules check it from the environment (`AUTH_BRAND_*`, src/config.ts), the admin API and the console
 * (src/http/brand.ts holds where it is kept); this file holds the rules and the CSS a page gets from it.
 */
export interface Brand {
  name?: string;
  logoUrl?: string;
  color?: string;
  colorDark?: string;
}

export const BRAND_FIELDS = ["name", "logoUrl", "color", "colorDark"] as const;

/**
 * Where a page may load an image from: an https URL without credentials, or plain http on this machine (a developer's
 * logo served next to `wrangler dev`). Its origin is all the page's CSP `img-src` then allows.
 */
export function imageOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  const allowed = url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
  return allowed ? url.origin : undefined;
}

export const brandNameSchema = z.string().trim().min(1).max(80);
export const brandLogoUrlSchema = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => imageOrigin(value) !== undefined, "must be an https URL");
export const brandColourSchema = (example: string) =>
  z.string().trim().regex(HEX_COLOUR, `must be a colour like ${example}`);

/**
 * The backgrounds text of the pages sits on, at their extremes: in light mode the error box's tint (#d3303022 over
 * white, a little darker than the white page), in dark mode a dark grey a little lighter than any browser's dark
 * `Canvas`. Link colours derived against these keep 4.5:1 on the plain page and inside the boxes.
 */
export const LIGHT_SURFACE = "#f6e0e0";
export const DARK_SURFACE = "#262626";

/** What a colour scheme of a page uses: the fill of primary buttons, its label, and the colour of links. */
export interface Palette {
  brand: string;
  onBrand: string;
  accent: string;
}

const palette = (colour: string, surface: string): Palette => ({
  brand: colour,
  onBrand: textOn(colour),
  accent: readableOn(colour, surface),
});

/**
 * The colours a brand gives light and dark pages; null without a brand colour (the house style's own). Without a dark
 * colour, dark pages use the light one with their own derived text colours.
 */
export function brandPalettes(brand: Brand): { light: Palette; dark: Palette } | null {
  if (!brand.color && !brand.colorDark) return null;
  const light = brand.color ?? brand.colorDark!;
  return { light: palette(light, LIGHT_SURFACE), dark: palette(brand.colorDark ?? light, DARK_SURFACE) };
}

const properties = (p: Palette) => `--brand: ${p.brand}; --on-brand: ${p.onBrand}; --accent: ${p.accent};`;

/**
 * The page's CSS for a brand colour, after the house style (which uses `--brand`, `--on-brand` and `--accent`). The
 * colours were checked as `#rrggbb` (so they are safe in CSS text); the derived ones are made here.
 */
export function brandStyle(brand: Brand): string {
  const palettes = brandPalettes(brand);
  if (!palettes) return "";
  return `
  :root { ${properties(palettes.light)} }
  @media (prefers-color-scheme: dark) { :root { ${properties(palettes.dark)} } }
`;
}
