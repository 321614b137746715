/**
 * How an image is made to a requested `width` × `height`: the part of the source that is kept and the size it is
 * scaled to. The words are CSS `object-fit`'s, as Supabase Storage takes them (`resize`):
 * - `contain`: the largest size within the box that keeps the aspect ratio (the storage API's only fit);
 * - `cover`: scaled to cover the box, then the middle of it kept, exactly `width` × `height`;
 * - `fill`: stretched to exactly `width` × `height`, the aspect ratio not kept; a side not given is the source's.
 * Never larger than the source: what a fit would enlarge is kept at the source's size, as imgproxy does without
 * `enlarge` (Storage's renderer; docs/decisions.md, "Issue 43: resize cover and fill").
 */
export type Fit = "contain" | "cover" | "fill";

export const FITS: readonly Fit[] = ["contain", "cover", "fill"];

type Size = { width: number; height: number };

/** The part of the source kept: a rectangle in its (upright) pixels. */
export type Region = { left: number; top: number; width: number; height: number };

export interface Geometry {
  /** The whole source for `contain` and `fill`; its middle for `cover`. */
  region: Region;
  /** The output's size, which `region` is scaled to. */
  width: number;
  height: number;
}

/** The largest size within `width` × `height` that keeps the aspect ratio; never larger than the image. */
export function fitInside(source: Size, params: { width?: number; height?: number }): Size {
  const scale = Math.min(
    1,
    params.width ? params.width / source.width : Number.POSITIVE_INFINITY,
    params.height ? params.height / source.height : Number.POSITIVE_INFINITY,
  );
  return {
    width: Math.max(1, Math.round(source.width * scale)),
    height: Math.max(1, Math.round(source.height * scale)),
  };
}

const whole = (source: Size): Region => ({ left: 0, top: 0, width: source.width, height: source.height });

/**
 * `fill`: each side scaled on its own (a side not given keeps the source's); when one side would grow, both are
 * shrunk back by the same factor until none grows, so the output keeps the asked-for proportions but never
 * exceeds the source (imgproxy's `force` without `enlarge`).
 */
function stretched(source: Size, params: { width?: number; height?: number }): Size {
  let across = params.width ? params.width / source.width : 1;
  let down = params.height ? params.height / source.height : 1;
  const largest = Math.max(across, down);
  if (largest > 1) {
    across /= largest;
    down /= largest;
  }
  return {
    width: Math.max(1, Math.round(source.width * across)),
    height: Math.max(1, Math.round(source.height * down)),
  };
}

/**
 * `cover` with both sides: the scale at which the source covers the box (at most 1), the output the box (within
 * the scaled source), and the region the source pixels under it, centred. Cropping the source first and scaling
 * only the region means no scaled copy larger than the output is ever made (transform.ts).
 */
function covered(source: Size, box: Size): Geometry {
  const scale = Math.min(1, Math.max(box.width / source.width, box.height / source.height));
  const width = Math.min(box.width, Math.max(1, Math.round(source.width * scale)));
  const height = Math.min(box.height, Math.max(1, Math.round(source.height * scale)));
  const regionWidth = Math.min(source.width, Math.max(width, Math.round(width / scale)));
  const regionHeight = Math.min(source.height, Math.max(height, Math.round(height / scale)));
  return {
    region: {
      left: Math.floor((source.width - regionWidth) / 2),
      top: Math.floor((source.height - regionHeight) / 2),
      width: regionWidth,
      height: regionHeight,
    },
    width,
    height,
  };
}

/**
 * What `params` make of an image of `source`'s size. No side given: the image as it is. `cover` with one side
 * given is `contain` (nothing to crop: the other side follows the aspect ratio), as in imgproxy.
 */
export function geometryOf(source: Size, params: { width?: number; height?: number; fit?: Fit }): Geometry {
  const fit = params.fit ?? "contain";
  if (!params.width && !params.height) return { region: whole(source), ...source };
  if (fit === "cover" && params.width && params.height) {
    return covered(source, { width: params.width, height: params.height });
  }
  const size = fit === "fill" ? stretched(source, params) : fitInside(source, params);
  return { region: whole(source), ...size };
}
