// R2 and D1 failing under uploads and downloads. Threat: a file record without its bytes or bytes without their
// record (storage.md: every file listed can be read, every object belongs to a file), a 500 where the contract
// promises 503 with Retry-After, an id the failed upload keeps so that its retry meets a 409.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp } from "../helpers";
import { STORAGE, uploadForm } from "../storage/helpers";
import { failingD1, failingR2 } from "../support/faults";
import { expectStorageUnavailable } from "./support";

const BYTES = "the bytes of a file that must not be half kept";

async function stateOf(id: string) {
  const row = await env.DB.prepare("SELECT object_key, is_uploaded FROM files WHERE id = ?")
    .bind(id)
    .first<{ object_key: string; is_uploaded: number }>();
  const objects = await env.FILES.list({ prefix: `default/${id}` });
  return { row, objects: objects.objects.length };
}

function uploadWith(overrides: Record<string, unknown>, token: string) {
  const svc = service({ ...NO_VERIFICATION, ...overrides });
  const id = crypto.randomUUID();
  const send = () =>
    svc.request("POST", `${STORAGE}/files`, {
      body: uploadForm([{ bytes: BYTES, metadata: { id } }]),
      token,
    });
  return { id, send };
}

describe("upload with a binding failing", () => {
  it.each([
    ["R2 refusing the put", () => ({ FILES: failingR2(env.FILES, { match: /^put$/, times: 1 }).binding })],
    [
      "R2 losing the put's answer after it stored the bytes",
      () => ({
        FILES: failingR2(env.FILES, { match: /^put$/, when: "after", times: 1 }).binding,
      }),
    ],
    [
      "D1 failing as the record is completed",
      () => ({
        DB: failingD1(env.DB, { match: /^update "files"/i, times: 1 }).binding,
      }),
    ],
    [
      "D1 failing as the upload is published",
      () => ({
        DB: failingD1(env.DB, { match: /update "files" set "is_uploaded"/i, times: 1 }).binding,
      }),
    ],
  ])("%s: 503 with Retry-After, no record and no bytes; the retry stores the file", async (_, bindings) => {
    const { accessToken } = await signUp(service(NO_VERIFICATION));
    const { id, send } = uploadWith(bindings(), accessToken);
    await expectStorageUnavailable(await send());
    expect(await stateOf(id)).toEqual({ row: null, objects: 0 });
    const again = await send();
    expect(again.status, await again.clone().text()).toBe(201);
    expect(await stateOf(id)).toMatchObject({ row: { is_uploaded: 1 }, objects: 1 });
  });
});

describe("download with a binding failing", () => {
  it.each([
    ["R2", () => ({ FILES: failingR2(env.FILES, { match: /^get$/, times: 1 }).binding })],
    ["D1", () => ({ DB: failingD1(env.DB, { match: /from "files"/i, times: 1 }).binding })],
  ])("%s failing: 503 with Retry-After; the retry reads the file", async (_, bindings) => {
    const { accessToken } = await signUp(service(NO_VERIFICATION));
    const { id, send } = uploadWith({}, accessToken);
    expect((await send()).status).toBe(201);
    const svc = service({ ...NO_VERIFICATION, ...bindings() });
    const read = () => svc.request("GET", `${STORAGE}/files/${id}`, { token: accessToken });
    await expectStorageUnavailable(await read());
    const again = await read();
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(BYTES);
  });
});
