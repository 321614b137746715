/**
 * MD5 (RFC 1321) whose running state can be saved as text and taken up again: a resumable upload's bytes arrive over
 * several requests, and the file's ETag is the MD5 of all of them (storage contract §1). The platform's digest
 * streams cannot be saved between requests. Not for security: MD5 is the contract's content checksum only.
 */

const S = [
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
  14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15,
  21, 6, 10, 15, 21,
];
const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0);

export class ResumableMd5 {
  private state: [number, number, number, number];
  /** Bytes hashed so far (a JS number holds any length an upload can have). */
  private length: number;
  /** The bytes of an unfinished 64-byte block. */
  private pending: Uint8Array;

  private constructor(state: [number, number, number, number], length: number, pending: Uint8Array) {
    this.state = state;
    this.length = length;
    this.pending = pending;
  }

  static start(): ResumableMd5 {
    return new ResumableMd5([0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476], 0, new Uint8Array(0));
  }

  /** Takes up a state `save()` gave: `<a>.<b>.<c>.<d>.<length>.<pending, base64>`. */
  static resume(saved: string): ResumableMd5 {
    const [a, b, c, d, length, pending] = saved.split(".");
    const words = [a, b, c, d].map((word) => Number.parseInt(word ?? "", 16) >>> 0) as [
      number,
      number,
      number,
      number,
    ];
    return new ResumableMd5(words, Number(length), new Uint8Array(Buffer.from(pending ?? "", "base64")));
  }

  save(): string {
    const words = this.state.map((word) => word.toString(16));
    return [...words, String(this.length), Buffer.from(this.pending).toString("base64")].join(".");
  }

  update(bytes: Uint8Array): this {
    this.length += bytes.length;
    let data = bytes;
    if (this.pending.length > 0) {
      data = new Uint8Array(this.pending.length + bytes.length);
      data.set(this.pending);
      data.set(bytes, this.pending.length);
    }
    const whole = data.length - (data.length % 64);
    for (let offset = 0; offset < whole; offset += 64) this.block(data, offset);
    this.pending = data.slice(whole);
    return this;
  }

  /** The digest as lower-case hex; the state is not changed (more bytes may still be added to a copy). */
  hex(): string {
    const copy = new ResumableMd5([...this.state], this.length, this.pending);
    const padding = new Uint8Array(((55 - (this.length % 64) + 64) % 64) + 1 + 8);
    padding[0] = 0x80;
    const bits = this.length * 8;
    const view = new DataView(padding.buffer);
    view.setUint32(padding.length - 8, bits >>> 0, true);
    view.setUint32(padding.length - 4, Math.floor(bits / 2 ** 32) >>> 0, true);
    copy.update(padding);
    const out = new Uint8Array(16);
    const outView = new DataView(out.buffer);
    for (const [i, word] of copy.state.entries()) outView.setUint32(i * 4, word, true);
    return [...out].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  private block(data: Uint8Array, offset: number): void {
    const view = new DataView(data.buffer, data.byteOffset + offset, 64);
    const m = Array.from({ length: 16 }, (_, i) => view.getUint32(i * 4, true));
    let [a, b, c, d] = this.state;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) [f, g] = [(b & c) | (~b & d), i];
      else if (i < 32) [f, g] = [(d & b) | (~d & c), (5 * i + 1) % 16];
      else if (i < 48) [f, g] = [b ^ c ^ d, (3 * i + 5) % 16];
      else [f, g] = [c ^ (b | ~d), (7 * i) % 16];
      const sum = (a + f + K[i]! + m[g]!) >>> 0;
      [a, d, c] = [d, c, b];
      b = (b + ((sum << S[i]!) | (sum >>> (32 - S[i]!)))) >>> 0;
    }
    this.state = [
      (this.state[0] + a) >>> 0,
      (this.state[1] + b) >>> 0,
      (this.state[2] + c) >>> 0,
      (this.state[3] + d) >>> 0,
    ];
  }
}
