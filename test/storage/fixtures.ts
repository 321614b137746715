// Test images made by the tests themselves: a gradient with a marker block, encoded as JPEG, PNG and WebP, and a
// JPEG carrying an EXIF orientation.
import { PhotonImage } from "@cf-wasm/photon";
import { encodeLossyWebp } from "../../src/storage/images/transform";

/** A width × height RGBA gradient with a red block in the top-left corner (so rotations are visible). */
export function gradient(width: number, height: number): PhotonImage {
  const pixels = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const corner = x < width / 4 && y < height / 4;
      pixels.set(corner ? [255, 0, 0, 255] : [(x * 255) / width, (y * 255) / height, 128, 255], i);
    }
  }
  return new PhotonImage(pixels, width, height);
}

export function jpeg(width: number, height: number, quality = 90): Uint8Array {
  const image = gradient(width, height);
  try {
    return image.get_bytes_jpeg(quality);
  } finally {
    image.free();
  }
}

export function png(width: number, height: number): Uint8Array {
  const image = gradient(width, height);
  try {
    return image.get_bytes();
  } finally {
    image.free();
  }
}

export async function webp(width: number, height: number): Promise<Uint8Array> {
  const image = gradient(width, height);
  try {
    return await encodeLossyWebp(image.get_raw_pixels(), width, height, 90);
  } finally {
    image.free();
  }
}

/** The JPEG with an APP1 Exif segment right after SOI holding one tag: Orientation (0x0112) = `orientation`. */
export function withExifOrientation(jpegBytes: Uint8Array, orientation: number): Uint8Array {
  const tiff = [
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0,
    0,
    0,
    8,
    0,
    1,
    0x01,
    0x12,
    0,
    3,
    0,
    0,
    0,
    1,
    0,
    orientation,
    0,
    0,
    0,
    0,
    0,
    0,
  ];
  const payload = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff];
  const length = payload.length + 2;
  const app1 = [0xff, 0xe1, length >> 8, length & 0xff, ...payload];
  return Uint8Array.from([...jpegBytes.subarray(0, 2), ...app1, ...jpegBytes.subarray(2)]);
}
