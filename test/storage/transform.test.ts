import { fileTypeFromBuffer } from "file-type";
import { imageSize } from "image-size";
import { describe, expect, it } from "vitest";
import { fitInside, transformImage } from "../../src/storage/images/transform";
import { jpeg, png, webp, withExifOrientation } from "./fixtures";

const params = (p: Partial<Parameters<typeof transformImage>[1]> = {}) => ({ format: "same" as const, ...p });

async function described(bytes: Uint8Array) {
  const size = imageSize(bytes);
  return { width: size.width, height: size.height, mime: (await fileTypeFromBuffer(bytes))?.mime };
}

describe("image transformation", () => {
  it("resizes JPEG, PNG and WebP inputs to fit, keeping the aspect ratio, into each output format", async () => {
    const inputs = { jpeg: jpeg(400, 300), png: png(400, 300), webp: await webp(400, 300) };
    for (const input of Object.values(inputs)) {
      expect(await described(await transformImage(input, params({ width: 100 }), "jpeg"))).toEqual({
        width: 100,
        height: 75,
        mime: "image/jpeg",
      });
      expect(await described(await transformImage(input, params({ height: 60 }), "png"))).toEqual({
        width: 80,
        height: 60,
        mime: "image/png",
      });
      expect(
        await described(await transformImage(input, params({ width: 100, height: 100 }), "webp")),
      ).toEqual({
        width: 100,
        height: 75,
        mime: "image/webp",
      });
    }
  });

  it("never upscales, and quality changes the size of lossy outputs", async () => {
    const input = jpeg(400, 300);
    expect(await described(await transformImage(input, params({ width: 1000 }), "jpeg"))).toMatchObject({
      width: 400,
      height: 300,
    });
    const low = await transformImage(input, params({ quality: 20 }), "webp");
    const high = await transformImage(input, params({ quality: 95 }), "webp");
    expect(low.length).toBeLessThan(high.length);
    const lowJpeg = await transformImage(input, params({ quality: 20 }), "jpeg");
    const highJpeg = await transformImage(input, params({ quality: 95 }), "jpeg");
    expect(lowJpeg.length).toBeLessThan(highJpeg.length);
  });

  it("applies the EXIF orientation: a 400×300 JPEG tagged 'rotate 90' comes out 300×400", async () => {
    const tagged = withExifOrientation(jpeg(400, 300), 6);
    expect(await described(await transformImage(tagged, params({ width: 3000 }), "png"))).toMatchObject({
      width: 300,
      height: 400,
    });
    expect(
      await described(await transformImage(withExifOrientation(jpeg(400, 300), 3), params(), "png")),
    ).toMatchObject({ width: 400, height: 300 });
  });

  it("encodes AVIF", async () => {
    const avif = await transformImage(jpeg(400, 300), params({ width: 120 }), "avif");
    expect(await described(avif)).toEqual({ width: 120, height: 90, mime: "image/avif" });
  });

  it("blurs, and refuses what it cannot do with a 400", async () => {
    const input = png(64, 64);
    const sharp = await transformImage(input, params(), "png");
    const blurred = await transformImage(input, params({ blur: 5 }), "png");
    expect(blurred).not.toEqual(sharp);
    await expect(transformImage(new Uint8Array([1, 2, 3]), params(), "png")).rejects.toThrow();
  });

  it("fits inside the box", () => {
    expect(fitInside({ width: 2000, height: 1500 }, { width: 300 })).toEqual({ width: 300, height: 225 });
    expect(fitInside({ width: 2000, height: 1500 }, { width: 300, height: 100 })).toEqual({
      width: 133,
      height: 100,
    });
    expect(fitInside({ width: 20, height: 15 }, { width: 300 })).toEqual({ width: 20, height: 15 });
  });
});
