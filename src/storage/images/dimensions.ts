import { imageSize } from "image-size";
import { heifLayout, isHeif } from "./heif-container";

/**
 * Width and height of an image as it is shown, from its header alone: EXIF orientations 5–8 turn it a quarter, so
 * the sides swap. Null when the header cannot be read from these bytes. HEIF is read here (heif-container.ts):
 * image-size takes the first `ispe` of the file, which need not be the primary image's (a grid's tiles' or a
 * thumbnail's may come first), and knows nothing of `irot`.
 */
export function imageDimensions(head: Uint8Array): { width: number; height: number } | null {
  if (isHeif(head)) return heifLayout(head)?.primary ?? null;
  try {
    const { width, height, orientation } = imageSize(head);
    if (!width || !height) return null;
    return orientation && orientation >= 5 ? { width: height, height: width } : { width, height };
  } catch {
    return null;
  }
}
