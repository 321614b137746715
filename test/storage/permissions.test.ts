// The permission matrix of storage contract §4: each action under each kind of rule, for the public role, signed-in
// users acting as one of their roles (`x-hasura-role`), the owner and the admin.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../helpers";
import { STORAGE, type WireFile } from "./helpers";

const svc = service({ ...NO_VERIFICATION, AUTH_USER_DEFAULT_ALLOWED_ROLES: "user,me,editor,moderator" });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

const as = (session: WireSession | null, role?: string): Record<string, string> => ({
  ...(session ? { authorization: `Bearer ${session.accessToken}` } : {}),
  ...(role ? { "x-hasura-role": role } : {}),
});

function uploadAs(headers: Record<string, string>) {
  const form = new FormData();
  form.append("bucket-id", "matrix");
  form.append("file[]", new Blob(["matrix"], { type: "text/plain" }), "m.txt");
  return svc.request("POST", `${STORAGE}/files`, { body: form, headers });
}

function replaceAs(id: string, headers: Record<string, string>) {
  const form = new FormData();
  form.append("file", new Blob(["changed"], { type: "text/plain" }), "m.txt");
  return svc.request("PUT", `${STORAGE}/files/${id}`, { body: form, headers });
}

describe("storage permission matrix", () => {
  it("applies role lists, authenticated, owner and public per action", async () => {
    const created = await svc.request("POST", `${STORAGE}/buckets`, {
      headers: ADMIN,
      json: {
        id: "matrix",
        rules: { upload: ["editor"], read: "authenticated", update: "owner", delete: ["moderator"] },
      },
    });
    expect(created.status).toBe(201);
    const editor = await signUp(svc, undefined, { allowedRoles: ["user", "editor"] });
    const otherEditor = await signUp(svc, undefined, { allowedRoles: ["user", "editor"] });
    const moderator = await signUp(svc, undefined, { allowedRoles: ["user", "moderator"] });

    // upload: ["editor"]
    expect((await uploadAs(as(null))).status).toBe(403);
    expect((await uploadAs(as(editor))).status).toBe(403); // acting as the default role, user
    expect((await uploadAs(as(moderator, "editor"))).status).toBe(403); // not one of its roles: stays user
    expect((await uploadAs(ADMIN)).status).toBe(201);
    const upload = await uploadAs(as(editor, "editor"));
    expect(upload.status).toBe(201);
    const file = ((await upload.json()) as { processedFiles: WireFile[] }).processedFiles[0]!;
    expect(file.uploadedByUserId).toBe(editor.user.id);

    // read: authenticated (a file the caller may not read is "not found")
    const read = (headers: Record<string, string>) =>
      svc.request("GET", `${STORAGE}/files/${file.id}`, { headers });
    expect((await read(as(null))).status).toBe(404);
    expect((await read(as(moderator))).status).toBe(200);
    expect(
      (await svc.request("HEAD", `${STORAGE}/files/${file.id}`, { headers: as(otherEditor) })).status,
    ).toBe(200);

    // update: owner
    expect((await replaceAs(file.id, as(otherEditor, "editor"))).status).toBe(403);
    expect((await replaceAs(file.id, as(null))).status).toBe(403);
    expect((await replaceAs(file.id, as(editor))).status).toBe(200);

    // delete: ["moderator"], not even the owner
    const del = (headers: Record<string, string>) =>
      svc.request("DELETE", `${STORAGE}/files/${file.id}`, { headers });
    expect((await del(as(editor, "editor"))).status).toBe(403);
    expect((await del(as(moderator))).status).toBe(403);
    expect((await del(as(moderator, "moderator"))).status).toBe(204);
  });
});
