import { imageSize } from "image-size";

/**
 * What photon may be given, and the size it will decode. photon's decoder (the `image` crate, 0.24) chooses the
 * format from the bytes, not from the file's declared type, and knows more formats than the transformer serves (GIF,
 * BMP, ICO, TIFF, …); the header the limits are checked against must be the one of the bitstream it will decode, or
 * a small header in front of a large bitstream gets a huge decode past them (docs/decisions.md, "The image
 * transformer's decoder bombs"):
 *
 * - a GIF declared `image/png`: image-size reads its logical screen (10 × 10), the decoder allocates its frame
 *   (8000 × 8000: 256 MB of RGBA, twice an isolate). Only JPEG, PNG and WebP reach photon (HEIC/HEIF is libheif's).
 * - a WebP whose VP8X canvas is 10 × 10 around a 6000 × 6000 VP8L bitstream: image-size reads the canvas, the
 *   decoder decodes the whole bitstream (317 MiB measured) and crops it to the canvas. libwebp refuses a still image
 *   whose bitstream is not its canvas' size; so is it here, and an animation's frames must be their declared size
 *   and within the canvas (a larger one made photon trap).
 *
 * PNG's size is its IHDR, which is what the decoder allocates (an APNG's frames must lie within it). JPEG's is its
 * first SOF, the one frame the decoder reads (a second SOF is hierarchical JPEG, which it refuses).
 */
export type PhotonFormat = "jpeg" | "png" | "webp";

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  prefix.every((byte, i) => bytes[at + i] === byte);

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG_SOI = [0xff, 0xd8, 0xff];
const RIFF = ascii("RIFF");
const WEBP = ascii("WEBP");

/** The format photon's decoder will take these bytes for, by the same magic numbers it sniffs (`guess_format`). */
export function photonFormat(bytes: Uint8Array): PhotonFormat | null {
  if (startsWith(bytes, PNG_SIGNATURE)) return "png";
  if (startsWith(bytes, JPEG_SOI)) return "jpeg";
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return "webp";
  return null;
}

/** image-size's name for each, which must agree: its own sniffing is not the decoder's. */
const IMAGE_SIZE_TYPE: Record<PhotonFormat, string> = { jpeg: "jpg", png: "png", webp: "webp" };

type Size = { width: number; height: number };

/**
 * The size photon will decode these bytes to (before EXIF orientation: the pixels are the same), or null when they
 * are not JPEG, PNG or WebP or their headers disagree with what would be decoded: such bytes are never decoded.
 */
export function photonInputSize(bytes: Uint8Array): Size | null {
  const format = photonFormat(bytes);
  if (!format) return null;
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    return null;
  }
  if (size.type !== IMAGE_SIZE_TYPE[format] || !size.width || !size.height) return null;
  if (format === "webp" && !webpBitstreamsFit(bytes, { width: size.width, height: size.height })) return null;
  return { width: size.width, height: size.height };
}

/** A VP8 or VP8L chunk's frame size, from its bitstream header (RFC 9649 §2.5, §3.3; RFC 6386 §9.1). */
function bitstreamSize(
  bytes: Uint8Array,
  view: DataView,
  id: string,
  at: number,
  length: number,
): Size | null {
  if (id === "VP8 " && length >= 10 && startsWith(bytes, [0x9d, 0x01, 0x2a], at + 3)) {
    return { width: view.getUint16(at + 6, true) & 0x3fff, height: view.getUint16(at + 8, true) & 0x3fff };
  }
  if (id === "VP8L" && length >= 5 && bytes[at] === 0x2f) {
    const bits = view.getUint32(at + 1, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return null;
}

type Chunk = { id: string; at: number; length: number };

/** The RIFF chunks in `[from, to)`; null when one runs past the end (the decoder would not read it either). */
function chunks(bytes: Uint8Array, view: DataView, from: number, to: number): Chunk[] | null {
  const found: Chunk[] = [];
  for (let at = from; at < to; ) {
    if (at + 8 > to) return null;
    const length = view.getUint32(at + 4, true);
    if (at + 8 + length > to) return null;
    found.push({ id: String.fromCharCode(...bytes.subarray(at, at + 4)), at: at + 8, length });
    at += 8 + length + (length & 1);
  }
  return found;
}

const u24 = (bytes: Uint8Array, at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
const isBitstream = (chunk: Chunk) => chunk.id === "VP8 " || chunk.id === "VP8L";
const same = (a: Size | null, b: Size) => a !== null && a.width === b.width && a.height === b.height;

/**
 * Whether every bitstream photon would decode is the size the header declares: `canvas` is what image-size read
 * (the VP8X canvas, or a simple file's bitstream). A still image's bitstream is its canvas' size; an animation's
 * frames (ANMF, RFC 9649 §2.7.1.1) are the size their chunk declares and lie within the canvas.
 */
function webpBitstreamsFit(bytes: Uint8Array, canvas: Size): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = Math.min(bytes.length, 8 + view.getUint32(4, true));
  const top = chunks(bytes, view, 12, end);
  if (!top || top.length === 0) return false;
  const bitstreams = top.filter(isBitstream);
  const first = top[0]!;
  if (first.id !== "VP8X") {
    return (
      bitstreams.length === 1 && same(bitstreamSize(bytes, view, first.id, first.at, first.length), canvas)
    );
  }
  const animated = (bytes[first.at]! & 0x02) !== 0;
  if (!animated) {
    return (
      bitstreams.length === 1 &&
      same(bitstreamSize(bytes, view, bitstreams[0]!.id, bitstreams[0]!.at, bitstreams[0]!.length), canvas)
    );
  }
  if (bitstreams.length > 0) return false;
  const frames = top.filter((chunk) => chunk.id === "ANMF");
  if (frames.length === 0) return false;
  return frames.every((frame) => {
    if (frame.length < 16) return false;
    const left = u24(bytes, frame.at) * 2;
    const top = u24(bytes, frame.at + 3) * 2;
    const size = { width: u24(bytes, frame.at + 6) + 1, height: u24(bytes, frame.at + 9) + 1 };
    if (left + size.width > canvas.width || top + size.height > canvas.height) return false;
    const inner = chunks(bytes, view, frame.at + 16, frame.at + frame.length)?.filter(isBitstream);
    return (
      inner?.length === 1 &&
      same(bitstreamSize(bytes, view, inner[0]!.id, inner[0]!.at, inner[0]!.length), size)
    );
  });
}
