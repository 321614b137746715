import { encode as encodePng } from "fast-png";
import { encode as encodeQr } from "uqr";

/** Pixels per QR module, and the quiet zone in modules that scanners need around the code (ISO/IEC 18004: 4). */
const SCALE = 6;
const QUIET_ZONE = 4;

/**
 * `text` as a QR code in a `data:image/png;base64,…` URL (contract §3.4, changeUserMfa `imageUrl`): the QR matrix from
 * `uqr`, the PNG from `fast-png`, both pure JavaScript (no canvas, no run-time WebAssembly: neither exists on Workers).
 */
export function qrPngDataUrl(text: string): string {
  const qr = encodeQr(text, { ecc: "M", border: QUIET_ZONE });
  const side = qr.size * SCALE;
  // One 8-bit grey channel: 0 for dark modules, 255 for light.
  const pixels = new Uint8Array(side * side).fill(255);
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < SCALE; dy++) {
        pixels.fill(0, (y * SCALE + dy) * side + x * SCALE, (y * SCALE + dy) * side + (x + 1) * SCALE);
      }
    });
  });
  const png = encodePng({ width: side, height: side, data: pixels, channels: 1, depth: 8 });
  let binary = "";
  for (const byte of png) binary += String.fromCharCode(byte);
  return `data:image/png;base64,${btoa(binary)}`;
}
