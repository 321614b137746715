import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { expectStorageError, get, STORAGE, svc, uploaded, uploadForm } from "./helpers";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `${STORAGE}${path}`, { headers: ADMIN, json });

describe("buckets (admin)", () => {
  it("creates, reads, updates and deletes buckets; uploads follow their rules", async () => {
    const created = await admin("POST", "/buckets", {
      id: "avatars",
      maxUploadFileSize: 1000,
      allowedMimeTypes: ["text/*"],
      rules: { upload: "authenticated", read: "public", update: "owner", delete: ["moderator"] },
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      id: "avatars",
      maxUploadFileSize: 1000,
      minUploadFileSize: 1,
    });
    await expectStorageError(
      await admin("POST", "/buckets", { id: "avatars" }),
      409,
      "bucket already exists",
    );
    expect(
      ((await (await admin("GET", "/buckets")).json()) as { buckets: { id: string }[] }).buckets.map(
        (b) => b.id,
      ),
    ).toEqual(expect.arrayContaining(["default", "avatars"]));

    const session = await signUp(svc);
    const [file] = await uploaded(
      uploadForm([{ bytes: "hi", type: "text/plain" }], "avatars"),
      session.accessToken,
    );
    // read: public — no token needed.
    expect(new TextDecoder().decode(await (await get(file!.id)).arrayBuffer())).toBe("hi");
    // delete: only the moderator role, not even the owner.
    await expectStorageError(
      await svc.request("DELETE", `${STORAGE}/files/${file!.id}`, { token: session.accessToken }),
      403,
      "you are not authorized",
    );

    const patched = await admin("PATCH", "/buckets/avatars", { cacheControl: "max-age=60" });
    expect(await patched.json()).toMatchObject({ cacheControl: "max-age=60", maxUploadFileSize: 1000 });
    expect((await get(file!.id)).headers.get("cache-control")).toBe("max-age=60");
    await expectStorageError(
      await admin("PATCH", "/buckets/avatars", { minUploadFileSize: 5000 }),
      400,
      "minUploadFileSize must not exceed maxUploadFileSize",
    );
    await expectStorageError(await admin("DELETE", "/buckets/avatars"), 400, "bucket is not empty");
    expect((await admin("DELETE", `/files/${file!.id}`)).status).toBe(204);
    expect((await admin("DELETE", "/buckets/avatars")).status).toBe(204);
    await expectStorageError(await admin("GET", "/buckets/avatars"), 404, "bucket not found");
    await expectStorageError(
      await admin("DELETE", "/buckets/default"),
      400,
      "the default bucket cannot be deleted",
    );
  });

  it("refuses bad settings and everyone but the admin", async () => {
    for (const body of [
      { id: "Bad Id" },
      { id: "ok", downloadExpiration: 0 },
      { id: "ok", rules: { read: "everyone" } },
      { id: "ok", extra: 1 },
    ]) {
      const response = await admin("POST", "/buckets", body);
      expect(response.status).toBe(400);
    }
    const session = await signUp(svc);
    for (const [method, path] of [
      ["GET", "/buckets"],
      ["POST", "/ops/list-orphans"],
    ] as const) {
      await expectStorageError(
        await svc.request(method, `${STORAGE}${path}`, { token: session.accessToken }),
        403,
        "you are not authorized",
      );
      await expectStorageError(
        await svc.request(method, `${STORAGE}${path}`, {
          headers: { "x-hasura-admin-secret": "wrong secret value!" },
        }),
        403,
        "you are not authorized",
      );
    }
  });
});

describe("buckets (admin): bodies that are not JSON", () => {
  it("answers a body that is not JSON, cut off or empty with a 400 in storage's shape, never a 500", async () => {
    await admin("POST", "/buckets", { id: "broken-bodies" });
    const bodies: [string, Record<string, string>][] = [
      ["not json", { "content-type": "application/json" }],
      ['{"id":"x", "maxUploadFileSize": 1', { "content-type": "application/json" }],
      ["", { "content-type": "application/json" }],
      ["", {}],
      ["id=x", { "content-type": "application/x-www-form-urlencoded" }],
      ['{"id":"x"}', { "content-type": "text/plain" }],
    ];
    for (const [method, path] of [
      ["POST", "/buckets"],
      ["PATCH", "/buckets/broken-bodies"],
    ] as const) {
      for (const [body, headers] of bodies) {
        const response = await svc.request(method, `${STORAGE}${path}`, {
          body,
          headers: { ...ADMIN, ...headers },
        });
        const context = `${method} ${path} ${JSON.stringify(body)} ${JSON.stringify(headers)}`;
        if (method === "PATCH" && body === "" && !headers["content-type"]) {
          // No body at all: a patch that changes nothing.
          expect(response.status, context).toBe(200);
          continue;
        }
        expect(response.status, context).toBe(400);
        const answer = (await response.json()) as { error: { message: string } };
        expect(answer.error.message, context).toBeTruthy();
        expect(response.headers.get("x-error"), context).toBe(answer.error.message);
      }
    }
    // A message quoting the request (an unknown key, as sent) with a character no header may carry: it threw while
    // the refusal was made, and answered 500 in the auth API's shape.
    for (const key of ["a\nb", "a\u0000b"]) {
      const response = await svc.request("POST", `${STORAGE}/buckets`, {
        json: { id: "control-key", [key]: 1 },
        headers: ADMIN,
      });
      expect(response.status, JSON.stringify(key)).toBe(400);
      const answer = (await response.json()) as { error: { message: string } };
      expect(answer.error.message).toContain("Unrecognized key");
      expect(response.headers.get("x-error")).not.toMatch(/\p{Cc}/u);
    }
  });
});

describe("ops", () => {
  it("lists and deletes orphans, broken metadata, and lists files not uploaded", async () => {
    const session = await signUp(svc);
    const [kept, broken] = await uploaded(
      uploadForm([{ bytes: "kept" }, { bytes: "bytes will vanish" }]),
      session.accessToken,
    );
    await env.FILES.delete(`default/${broken!.id}`);
    const orphanKey = `default/${crypto.randomUUID()}`;
    await env.FILES.put(orphanKey, "no record");
    const now = Date.now();
    const pendingId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, created_at, updated_at)
       VALUES (?, 'default', 'pending', 0, 'text/plain', '""', 0, ?, ?)`,
    )
      .bind(pendingId, now, now)
      .run();

    expect(await (await admin("POST", "/ops/list-orphans")).json()).toEqual({ files: [orphanKey] });
    const listedBroken = (await (await admin("POST", "/ops/list-broken-metadata")).json()) as {
      metadata: { id: string }[];
    };
    expect(listedBroken.metadata).toEqual([
      { id: broken!.id, name: broken!.name, bucketId: "default", isUploaded: true },
    ]);
    expect(await (await admin("POST", "/ops/list-not-uploaded")).json()).toEqual({
      metadata: [{ id: pendingId, name: "pending", bucketId: "default", isUploaded: false }],
    });

    expect(await (await admin("POST", "/ops/delete-orphans")).json()).toEqual({ files: [orphanKey] });
    expect(await env.FILES.get(orphanKey)).toBeNull();
    expect((await (await admin("POST", "/ops/delete-broken-metadata")).json()) as unknown).toMatchObject({
      metadata: [{ id: broken!.id }],
    });
    await expectStorageError(await get(broken!.id, {}, session.accessToken), 404, "file not found");
    expect(new TextDecoder().decode(await (await get(kept!.id, {}, session.accessToken)).arrayBuffer())).toBe(
      "kept",
    );
  });
});
