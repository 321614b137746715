import { badRequest } from "../errors";
import { type Fit, geometryOf } from "./fit";

/**
 * Image parameters of storage contract §3.4, validated and normalised (so equal requests share a cached variant).
 */
export type OutputFormat = "jpeg" | "png" | "webp" | "avif";

export interface ImageParams {
  width?: number;
  height?: number;
  quality?: number;
  blur?: number;
  /** `same` (default), `auto` (negotiated from Accept), or an explicit format. */
  format: "same" | "auto" | OutputFormat;
  /** How `width` × `height` is met (fit.ts); absent: `contain`, the storage API's only one. */
  fit?: Fit;
}

const FORMATS = ["same", "auto", "jpeg", "png", "webp", "avif"] as const;
const PARAM_NAMES = ["w", "h", "q", "b", "f"];

export const hasImageParams = (query: URLSearchParams) => PARAM_NAMES.some((name) => query.has(name));

function integer(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw badRequest(`image manipulation parameters out of range: ${name} must be between ${min} and ${max}`);
  }
  return name === "b" ? value : Math.round(value);
}

export function parseImageParams(query: URLSearchParams): ImageParams {
  const format = (query.get("f") || "same").toLowerCase();
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw badRequest(`image manipulation parameters out of range: f must be one of ${FORMATS.join(", ")}`);
  }
  const blur = integer(query, "b", 0, 250);
  return {
    width: integer(query, "w", 1, 8000),
    height: integer(query, "h", 1, 8000),
    quality: integer(query, "q", 1, 100),
    blur: blur === 0 ? undefined : blur,
    format: format as ImageParams["format"],
  };
}

const MIME: Record<OutputFormat, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  avif: "image/avif",
};
export const mimeOf = (format: OutputFormat) => MIME[format];

export function formatOfMime(mimeType: string): OutputFormat | null {
  const entry = Object.entries(MIME).find(([, mime]) => mime === mimeType);
  return entry ? (entry[0] as OutputFormat) : null;
}

/** HEIC/HEIF photos (as phones take them) are decoded (heif.ts) but never encoded: nothing here writes HEVC. */
export const HEIF_MIME_TYPES: readonly string[] = ["image/heic", "image/heif"];

/**
 * What `f=same` means for a source of this type, or null when it cannot be transformed: its own format, except
 * HEIC/HEIF, which has no encoder here and comes out as JPEG (a photo: lossy, and shown by every client), and AVIF,
 * which has no decoder here.
 */
export function sameFormatOf(mimeType: string): OutputFormat | null {
  if (HEIF_MIME_TYPES.includes(mimeType)) return "jpeg";
  const format = formatOfMime(mimeType);
  return format === "avif" ? null : format;
}

/** `Accept` media ranges with their q-values (RFC 9110 §12.5.1); `type/*` and `*\/*` count. */
function acceptQuality(accept: string, mime: string): number {
  let best = -1;
  let bestSpecificity = -1;
  for (const range of accept.split(",")) {
    const [type, ...params] = range.trim().toLowerCase().split(";");
    if (!type) continue;
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith("q="))
        ?.slice(2) ?? "1",
    );
    const specificity = type === mime ? 2 : type === `${mime.split("/")[0]}/*` ? 1 : type === "*/*" ? 0 : -1;
    if (specificity > bestSpecificity) {
      bestSpecificity = specificity;
      best = Number.isFinite(q) ? q : 0;
    }
  }
  return best;
}

/**
 * The output format: `same` keeps the input's; `auto` takes the first of AVIF, WebP that the client accepts
 * (q > 0, storage contract §3.4), else the input's. `avifFits` is false when the output is larger than AVIF may
 * encode (limits.ts): then `auto` goes on to WebP.
 */
export function negotiateFormat(
  params: ImageParams,
  input: OutputFormat,
  accept: string | null,
  avifFits = true,
): OutputFormat {
  if (params.format === "same") return input;
  if (params.format !== "auto") return params.format;
  if (avifFits && accept && acceptQuality(accept, "image/avif") > 0) return "avif";
  return accept && acceptQuality(accept, "image/webp") > 0 ? "webp" : input;
}

export const DEFAULT_QUALITY = 80;

/**
 * The parameters in the terms of the output they produce, so that requests producing the same bytes share one
 * variant and one cache key: with the source's size known, `w`/`h` become the exact output size (a `w` above the
 * image's width is the image's width: no upscaling); the blur sigma becomes the whole-pixel radius photon applies
 * (a thousand float sigmas are a handful of radii); quality counts only for lossy outputs. Without this, `?w=4001`,
 * `?w=4002`… or `?b=1.001`, `?b=1.002`… each cost a full transformation (CPU amplification).
 */
export function normaliseParams(
  params: ImageParams,
  format: OutputFormat,
  source: { width: number; height: number } | null,
): ImageParams {
  const size = source ? geometryOf(source, params) : { width: params.width, height: params.height };
  const radius = params.blur ? Math.max(1, Math.round(params.blur * 2)) : undefined;
  const fit = normalFit(params);
  return {
    width: size.width,
    height: size.height,
    quality: format === "png" ? undefined : (params.quality ?? DEFAULT_QUALITY),
    blur: radius === undefined ? undefined : radius / 2,
    format: params.format,
    ...(fit ? { fit } : {}),
  };
}

/**
 * The fit only where it changes the output: none without a side to meet, and `cover` with one side is `contain`
 * (fit.ts). An exact output size met by `cover` again is the same crop (the box is within the scaled source), and by
 * `fill` the same stretch, so the normalised parameters make the same image as the asked ones.
 */
function normalFit(params: ImageParams): Fit | undefined {
  if (!params.fit || params.fit === "contain" || (!params.width && !params.height)) return undefined;
  if (params.fit === "cover" && !(params.width && params.height)) return undefined;
  return params.fit;
}

/**
 * The cache key part of normalised parameters: every value that changes the output, in a fixed order. A `cover` and
 * a `contain` of one size are different images; `contain` adds nothing, so the storage API's keys stay as they were.
 */
export function variantKey(params: ImageParams, format: OutputFormat): string {
  const fit = params.fit && params.fit !== "contain" ? `-${params.fit}` : "";
  return `w${params.width ?? ""}-h${params.height ?? ""}-q${params.quality ?? ""}-b${params.blur ?? ""}-${format}${fit}`;
}
