import { imageSize } from "image-size";

/**
 * Width and height of an image as it is shown, from its header alone: EXIF orientations 5–8 turn it a quarter, so
 * the sides swap. Null when the header cannot be read from these bytes.
 */
export function imageDimensions(head: Uint8Array): { width: number; height: number } | null {
  try {
    const { width, height, orientation } = imageSize(head);
    if (!width || !height) return null;
    return orientation && orientation >= 5 ? { width: height, height: width } : { width, height };
  } catch {
    return null;
  }
}
