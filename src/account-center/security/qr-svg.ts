import { raw } from "hono/html";
import { encode } from "uqr";

/** The quiet zone in modules that scanners need around the code (ISO/IEC 18004: 4). */
const QUIET_ZONE = 4;

/**
 * `text` (an `otpauth://` URI) as an inline SVG QR code: drawn into the page, so its CSP needs no `img-src` (it loads
 * no image at all, unlike the API's `data:` PNG). One path of unit squares on a white square, the same `uqr` matrix
 * as src/auth/mfa/qr-png.ts; white stays white in dark mode, as scanners need. Nothing of `text` is in the markup.
 */
export function qrSvg(text: string, label: string) {
  const qr = encode(text, { ecc: "M", border: QUIET_ZONE });
  const squares: string[] = [];
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) squares.push(`M${x} ${y}h1v1h-1z`);
    });
  });
  // The label is the catalogue's, escaped like any attribute; the numbers and path are ours.
  const title = label.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return raw(
    `<svg class="qr" role="img" aria-label="${title}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${qr.size} ${qr.size}" shape-rendering="crispEdges"><rect width="${qr.size}" height="${qr.size}" fill="#fff"/><path fill="#000" d="${squares.join("")}"/></svg>`,
  );
}
