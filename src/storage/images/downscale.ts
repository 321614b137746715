/**
 * An RGBA image made smaller where it lies, by area averaging: each output pixel is the mean of the source pixels
 * its footprint covers, edge pixels weighted by the part they cover (a box filter as wide as the scale, what
 * OpenCV calls INTER_AREA: no aliasing on downscales, a little softer than photon's CatmullRom).
 *
 * Why in place and in JavaScript: a HEIF photo is decoded by libheif (heif.ts) into libheif's own memory, and
 * resizing it there means photon never holds more than the output (at most `MAX_OUTPUT_PIXELS`). Handed a 2 MP
 * image to resize, photon grew to 41.8 MiB, and its heap, which never shrinks, was then so laid out that the largest
 * JPEG and PNG transformations took it to 63.2 MiB instead of their 51.2 (docs/decisions.md, "Issue 43: image memory
 * after HEIC"); handed the output, it stays at 12.6 MiB. Output row `y` ends at or before the first source
 * row not yet read (each output row covers at least one source row, and is no wider), so writing over the source
 * as we go never loses a pixel still needed. Two rows of floats are all it takes beside the image.
 */
export function downscaleInPlace(
  pixels: Uint8Array,
  source: { width: number; height: number },
  target: { width: number; height: number },
): Uint8Array {
  const { width: sw, height: sh } = source;
  const { width: tw, height: th } = target;
  if (tw > sw || th > sh || tw < 1 || th < 1)
    throw new RangeError("downscaleInPlace only makes images smaller");
  if (tw === sw && th === sh) return pixels.subarray(0, sw * sh * 4);
  const sx = sw / tw;
  const sy = sh / th;
  // For each output column: the first source column it covers, and the weight of each one it covers.
  const first = new Int32Array(tw);
  const count = new Int32Array(tw);
  const span = Math.ceil(sx) + 1;
  const weights = new Float32Array(tw * span);
  for (let x = 0; x < tw; x++) {
    const left = x * sx;
    const right = Math.min(sw, left + sx);
    const start = Math.floor(left);
    first[x] = start;
    let n = 0;
    for (let i = start; i < right && i < sw; i++)
      weights[x * span + n++] = Math.min(i + 1, right) - Math.max(i, left);
    count[x] = n;
  }
  const row = new Float32Array(tw * 4);
  const sum = new Float32Array(tw * 4);
  let rowIndex = -1;
  const scale = 1 / (sx * sy);
  for (let y = 0; y < th; y++) {
    const top = y * sy;
    const bottom = Math.min(sh, top + sy);
    sum.fill(0);
    for (let j = Math.floor(top); j < bottom && j < sh; j++) {
      // A source row shared by two output rows is read once: before the first of them is written.
      if (j !== rowIndex) {
        const base = j * sw * 4;
        for (let x = 0; x < tw; x++) {
          let r = 0;
          let g = 0;
          let b = 0;
          let a = 0;
          for (let k = 0; k < count[x]!; k++) {
            const at = base + (first[x]! + k) * 4;
            const w = weights[x * span + k]!;
            r += pixels[at]! * w;
            g += pixels[at + 1]! * w;
            b += pixels[at + 2]! * w;
            a += pixels[at + 3]! * w;
          }
          row[x * 4] = r;
          row[x * 4 + 1] = g;
          row[x * 4 + 2] = b;
          row[x * 4 + 3] = a;
        }
        rowIndex = j;
      }
      const w = Math.min(j + 1, bottom) - Math.max(j, top);
      for (let i = 0; i < tw * 4; i++) sum[i]! += row[i]! * w;
    }
    const out = y * tw * 4;
    for (let i = 0; i < tw * 4; i++) pixels[out + i] = Math.min(255, Math.round(sum[i]! * scale));
  }
  return pixels.subarray(0, tw * th * 4);
}

/**
 * The `region` of an RGBA image moved to its start, rows packed, where it lies (images/fit.ts: `cover` keeps the
 * middle). Each row of the region moves to an offset at or before its own (the region is no wider than the image
 * and starts at or after its origin), so moving them top to bottom never overwrites one not yet moved.
 */
export function cropInPlace(
  pixels: Uint8Array,
  width: number,
  region: { left: number; top: number; width: number; height: number },
): Uint8Array {
  const row = region.width * 4;
  for (let y = 0; y < region.height; y++) {
    const from = ((region.top + y) * width + region.left) * 4;
    pixels.copyWithin(y * row, from, from + row);
  }
  return pixels.subarray(0, row * region.height);
}
