/**
 * What a HEIF file (ISO/IEC 23008-12: HEIC photos from phones) declares about its images, read from the container's
 * boxes alone, without decoding anything: the primary image's size as shown, and the largest size any of its
 * images declares. The limits (limits.ts) are checked against these before libheif allocates a pixel, so a file
 * declaring a huge image is refused with a 400, not an out-of-memory isolate.
 */

/** ftyp brands of HEIF still images (HEVC-coded or generic), as libheif and phones write them; AVIF is not one. */
const HEIF_BRANDS = new Set(["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "mif2", "msf1"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

interface Box {
  type: string;
  /** Where the payload starts (after the header) and where the box ends. */
  start: number;
  end: number;
}

const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
const u16 = (bytes: Uint8Array, at: number) => (bytes[at]! << 8) | bytes[at + 1]!;
const u32 = (bytes: Uint8Array, at: number) =>
  bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);

/** The boxes between `start` and `end`; stops at the first one that does not fit (a truncated head). */
function boxes(bytes: Uint8Array, start: number, end: number): Box[] {
  const found: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    let size = u32(bytes, at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) break;
      // A 64-bit size: the high word must be zero for anything this reads (an image is at most MAX_INPUT_BYTES).
      if (u32(bytes, at + 8) !== 0) break;
      size = u32(bytes, at + 12);
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) {
      // The last box may run past a head of the file: its start is still worth knowing (mdat, usually).
      found.push({ type: fourcc(bytes, at + 4), start: at + header, end: Math.min(end, at + size) });
      break;
    }
    found.push({ type: fourcc(bytes, at + 4), start: at + header, end: at + size });
    at += size;
  }
  return found;
}

const child = (bytes: Uint8Array, parent: Box, type: string, fullBox = false) =>
  boxes(bytes, parent.start + (fullBox ? 4 : 0), parent.end).find((box) => box.type === type);

/** Whether the bytes start like a HEIF still image: an ftyp box naming a HEIF brand, and no AVIF brand. */
export function isHeif(bytes: Uint8Array): boolean {
  const ftyp = boxes(bytes, 0, Math.min(bytes.length, 4096))[0];
  if (ftyp?.type !== "ftyp" || ftyp.end - ftyp.start < 8) return false;
  const brands = [fourcc(bytes, ftyp.start)];
  for (let at = ftyp.start + 8; at + 4 <= ftyp.end; at += 4) brands.push(fourcc(bytes, at));
  return !brands.some((brand) => AVIF_BRANDS.has(brand)) && brands.some((brand) => HEIF_BRANDS.has(brand));
}

/** Reads bits of an HEVC RBSP, most significant first; past the end it reads zeros (the caller checks `over`). */
class Bits {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}
  get over() {
    return this.at > this.bytes.length * 8;
  }
  bit(): number {
    const byte = this.bytes[this.at >> 3] ?? 0;
    const value = (byte >> (7 - (this.at & 7))) & 1;
    this.at += 1;
    return value;
  }
  skip(count: number): void {
    this.at += count;
  }
  /** ue(v), Exp-Golomb; null past 31 leading zeros (no size needs more). */
  unsigned(): number | null {
    let zeros = 0;
    while (this.bit() === 0) {
      if (++zeros > 31 || this.over) return null;
    }
    let value = 0;
    for (let i = 0; i < zeros; i++) value = value * 2 + this.bit();
    return 2 ** zeros - 1 + value;
  }
}

/**
 * The coded frame size of an HEVC sequence parameter set (ITU-T H.265 §7.3.2.2): what libde265 allocates, whatever
 * the `ispe` says. The libde265 in this build (1.0.15) is not handed libheif's size limits, so a stream coding a
 * larger frame than its `ispe` declares is caught here. Null when the NAL unit cannot be read that far.
 */
function spsFrameSize(nal: Uint8Array): { width: number; height: number } | null {
  // Emulation prevention bytes (00 00 03) removed, and the two-byte NAL unit header skipped.
  const rbsp: number[] = [];
  for (let i = 2; i < nal.length; i++) {
    if (i >= 4 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    rbsp.push(nal[i]!);
  }
  const bits = new Bits(Uint8Array.from(rbsp));
  bits.skip(4); // sps_video_parameter_set_id
  const subLayers = (bits.bit() << 2) | (bits.bit() << 1) | bits.bit(); // sps_max_sub_layers_minus1
  bits.skip(1); // sps_temporal_id_nesting_flag
  bits.skip(88 + 8); // profile_tier_level: the general profile, then general_level_idc
  const present: [number, number][] = [];
  for (let i = 0; i < subLayers; i++) present.push([bits.bit(), bits.bit()]);
  if (subLayers > 0) bits.skip(2 * (8 - subLayers));
  for (const [profile, level] of present) bits.skip((profile ? 88 : 0) + (level ? 8 : 0));
  if (bits.unsigned() === null) return null; // sps_seq_parameter_set_id
  const chroma = bits.unsigned();
  if (chroma === 3) bits.skip(1); // separate_colour_plane_flag
  const width = bits.unsigned();
  const height = bits.unsigned();
  if (chroma === null || !width || !height || bits.over) return null;
  return { width, height };
}

/** The SPS NAL units of an HEVCDecoderConfigurationRecord's arrays (ISO/IEC 14496-15 §8.3.3.1), type 33. */
function hvccFrameSizes(bytes: Uint8Array, box: Box): ({ width: number; height: number } | null)[] {
  const sizes: ({ width: number; height: number } | null)[] = [];
  if (box.end - box.start < 23) return [null];
  const arrays = bytes[box.start + 22]!;
  let at = box.start + 23;
  for (let a = 0; a < arrays && at + 3 <= box.end; a++) {
    const type = bytes[at]! & 0x3f;
    const count = u16(bytes, at + 1);
    at += 3;
    for (let n = 0; n < count && at + 2 <= box.end; n++) {
      const length = u16(bytes, at);
      at += 2;
      if (at + length > box.end) return [...sizes, null];
      if (type === 33) sizes.push(spsFrameSize(bytes.subarray(at, at + length)));
      at += length;
    }
  }
  return sizes;
}

export interface HeifLayout {
  /** The primary image as shown: its `ispe`, sides swapped when an `irot` turns it a quarter. */
  primary: { width: number; height: number };
  /** The most pixels any `ispe` of the file declares (grid tiles, thumbnails, alpha and depth planes included). */
  largestPixels: number;
  /**
   * Bytes libheif holds per pixel while decoding, for the costliest HEVC configuration (`hvcC`) in the file: its
   * decoded planes (1.5 bytes a sample set at 4:2:0, 2 at 4:2:2, 3 at 4:4:4; twice that above 8 bits) and the RGBA
   * it converts them to (4). 10 (the worst) when no configuration can be read.
   */
  bytesPerPixel: number;
  /** The most pixels any HEVC sequence parameter set codes a frame with (0: none in the file). */
  largestCodedPixels: number;
}

const PLANES_PER_PIXEL = [1, 1.5, 2, 3]; // chroma_format_idc 0 (monochrome), 1 (4:2:0), 2 (4:2:2), 3 (4:4:4)
const WORST_BYTES_PER_PIXEL = 3 * 2 + 4;

/**
 * An HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 §8.3.3.1): chroma_format_idc in the low 2 bits of byte 16,
 * bit depths less 8 in the low 3 bits of bytes 17 and 18.
 */
function hvccBytesPerPixel(bytes: Uint8Array, box: Box): number {
  if (box.end - box.start < 19) return WORST_BYTES_PER_PIXEL;
  const chroma = bytes[box.start + 16]! & 3;
  const depth = 8 + Math.max(bytes[box.start + 17]! & 7, bytes[box.start + 18]! & 7);
  return PLANES_PER_PIXEL[chroma]! * (depth > 8 ? 2 : 1) + 4;
}

/** Property indexes (1-based, into ipco) associated with `itemId` in the ipma box. */
function associations(bytes: Uint8Array, ipma: Box, itemId: number): number[] {
  const version = bytes[ipma.start]!;
  const wideIndex = (bytes[ipma.start + 3]! & 1) === 1;
  let at = ipma.start + 4;
  if (at + 4 > ipma.end) return [];
  const entries = u32(bytes, at);
  at += 4;
  for (let entry = 0; entry < entries && at < ipma.end; entry++) {
    const id = version < 1 ? u16(bytes, at) : u32(bytes, at);
    at += version < 1 ? 2 : 4;
    const count = bytes[at] ?? 0;
    at += 1;
    const indexes: number[] = [];
    for (let n = 0; n < count && at < ipma.end; n++) {
      indexes.push(wideIndex ? u16(bytes, at) & 0x7fff : bytes[at]! & 0x7f);
      at += wideIndex ? 2 : 1;
    }
    if (id === itemId) return indexes;
  }
  return [];
}

/**
 * The layout from the file's `meta` box (which phones and encoders put before the coded data, so the head of an
 * upload holds it), or null when the bytes are not a readable HEIF: no primary item, or no size for it.
 */
export function heifLayout(bytes: Uint8Array): HeifLayout | null {
  if (!isHeif(bytes)) return null;
  const meta = boxes(bytes, 0, bytes.length).find((box) => box.type === "meta");
  if (!meta) return null;
  const pitm = child(bytes, meta, "pitm", true);
  const iprp = child(bytes, meta, "iprp", true);
  const ipco = iprp && child(bytes, iprp, "ipco");
  const ipma = iprp && child(bytes, iprp, "ipma");
  if (!pitm || !ipco || !ipma || pitm.end - pitm.start < 6) return null;
  const primaryId = bytes[pitm.start] === 0 ? u16(bytes, pitm.start + 4) : u32(bytes, pitm.start + 4);
  const properties = boxes(bytes, ipco.start, ipco.end);
  const sizeOf = (box: Box) =>
    box.type === "ispe" && box.end - box.start >= 12
      ? { width: u32(bytes, box.start + 4), height: u32(bytes, box.start + 8) }
      : null;
  let largestPixels = 0;
  let bytesPerPixel = 0;
  let largestCodedPixels = 0;
  for (const box of properties) {
    const size = sizeOf(box);
    if (size) largestPixels = Math.max(largestPixels, size.width * size.height);
    if (box.type !== "hvcC") continue;
    bytesPerPixel = Math.max(bytesPerPixel, hvccBytesPerPixel(bytes, box));
    for (const coded of hvccFrameSizes(bytes, box)) {
      // An SPS that cannot be read cannot be bounded: the file is not one to hand to the decoder.
      if (!coded) return null;
      largestCodedPixels = Math.max(largestCodedPixels, coded.width * coded.height);
    }
  }
  const own = associations(bytes, ipma, primaryId)
    .map((index) => properties[index - 1])
    .filter((box): box is Box => box !== undefined);
  const ispe = own.map(sizeOf).find((size) => size !== null);
  if (!ispe || ispe.width === 0 || ispe.height === 0) return null;
  // irot: counter-clockwise quarter turns in its low two bits; libheif applies it when decoding.
  const irot = own.find((box) => box.type === "irot" && box.end > box.start);
  const quarter = irot ? (bytes[irot.start]! & 3) % 2 === 1 : false;
  return {
    primary: quarter ? { width: ispe.height, height: ispe.width } : ispe,
    largestPixels,
    bytesPerPixel: bytesPerPixel || WORST_BYTES_PER_PIXEL,
    largestCodedPixels,
  };
}
