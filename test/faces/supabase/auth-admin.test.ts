import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueEmail } from "../../helpers";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * auth-js's admin namespace (`supabase.auth.admin.*`) through the face, with a secret key: the admin API's own
 * functions behind GoTrue's shapes (contract supabase.md §2). Threat: a client key, or a user's token, reaching it.
 */

const svc = supabaseService();
const admin = () => supabaseClient(svc, SECRET_KEY);

describe("auth.admin with the secret key", () => {
  it("createUser, getUserById, updateUserById, deleteUser", async () => {
    const email = uniqueEmail("admin-made");
    const made = await admin().auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
      user_metadata: { team: "ops" },
    });
    expect(made.error).toBeNull();
    const id = made.data.user!.id;
    expect(made.data.user).toMatchObject({ email, user_metadata: { team: "ops" } });
    expect(made.data.user?.email_confirmed_at).toEqual(expect.any(String));

    // The user signs in through the client face with the password the operator set.
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD })).error,
    ).toBeNull();

    const got = await admin().auth.admin.getUserById(id);
    expect(got.data.user?.id).toBe(id);

    const newPassword = "an operator's new passphrase";
    const changed = await admin().auth.admin.updateUserById(id, {
      user_metadata: { team: "platform" },
      password: newPassword,
    });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.user_metadata).toEqual({ team: "platform" });
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: newPassword })).error,
    ).toBeNull();

    expect((await admin().auth.admin.deleteUser(id)).error).toBeNull();
    const gone = await admin().auth.admin.getUserById(id);
    expect(gone.error).toMatchObject({ status: 404, code: "user_not_found" });
  });

  it("listUsers: newest first, by page, with GoTrue's total and next page", async () => {
    await admin().auth.admin.createUser({ email: uniqueEmail("page-0"), password: PASSWORD });
    const first = await admin().auth.admin.createUser({ email: uniqueEmail("page-a"), password: PASSWORD });
    const second = await admin().auth.admin.createUser({ email: uniqueEmail("page-b"), password: PASSWORD });
    const { data, error } = await admin().auth.admin.listUsers({ page: 1, perPage: 2 });
    expect(error).toBeNull();
    expect(data.users.map((user) => user.id)).toEqual([second.data.user!.id, first.data.user!.id]);
    expect((data as unknown as { total: number }).total).toBeGreaterThanOrEqual(3);
    expect((data as unknown as { nextPage: number | null }).nextPage).toBe(2);
    const next = await admin().auth.admin.listUsers({ page: 2, perPage: 2 });
    expect(next.data.users.map((user) => user.id)).not.toContain(second.data.user!.id);
    // Past the bound a page would merge too many rows: GoTrue's 400, naming the way further.
    const deep = await admin().auth.admin.listUsers({ page: 10_000, perPage: 1000 });
    expect(deep.error).toMatchObject({ status: 400, code: "validation_failed" });
  });

  it("refuses a ban_duration that is no Go duration (400), rather than guessing one (timed bans: mfa-admin.test.ts)", async () => {
    const { data } = await admin().auth.admin.createUser({ email: uniqueEmail("ban"), password: PASSWORD });
    const banned = await admin().auth.admin.updateUserById(data.user!.id, { ban_duration: "24 hours" });
    expect(banned.error).toMatchObject({ status: 400, code: "validation_failed" });
  });

  it("refuses the publishable key, and a user's token beside the secret key", async () => {
    const asClient = await supabaseClient(svc).auth.admin.createUser({ email: uniqueEmail("nope") });
    expect(asClient.error).toMatchObject({ status: 403, code: "not_admin" });

    const email = uniqueEmail("user-token");
    const { data } = await supabaseClient(svc).auth.signUp({ email, password: PASSWORD });
    const withUserToken = await svc.request("GET", `${FACE}/auth/v1/admin/users/${data.user!.id}`, {
      headers: { apikey: SECRET_KEY, authorization: `Bearer ${data.session!.access_token}` },
    });
    expect(withUserToken.status).toBe(403);
    const plain = await svc.request("GET", `${FACE}/auth/v1/admin/users/${data.user!.id}`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(plain.status).toBe(403);
  });

  it("answers 404 user_not_found for an id that is not one (auth-js checks the shape first; a raw call does not)", async () => {
    const { error } = await admin().auth.admin.getUserById(crypto.randomUUID());
    expect(error).toMatchObject({ status: 404, code: "user_not_found" });
    const raw = await svc.request("GET", `${FACE}/auth/v1/admin/users/not-a-uuid`, {
      headers: { apikey: SECRET_KEY },
    });
    expect(raw.status).toBe(404);
    expect(raw.headers.get("x-sb-error-code")).toBe("user_not_found");
  });
});
