import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { userD1 } from "../../support/shards";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * GoTrue's `app_metadata` (contract supabase.md §2, "One account, two faces"): set only by the service role through
 * auth-js's admin namespace (`admin.createUser`, `admin.updateUserById`), merged key by key with a null removing a
 * key, beside the service's own `provider`/`providers`; carried in the user object and the access token's claims.
 * And the user object is the same in every answer of the face: identities and factors alike in getUser, the grants
 * and the admin namespace.
 */

const svc = supabaseService({ AUTH_MFA_ENABLED: "true" });
const admin = () => supabaseClient(svc, SECRET_KEY);
const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });

/** A user the operator made with `app_metadata`, signed in through a client as an app holds it. */
async function adminMadeUser(appMetadata: Record<string, unknown>) {
  const email = uniqueEmail("appmeta");
  const made = await admin().auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
    app_metadata: appMetadata,
  });
  expect(made.error).toBeNull();
  return { email, id: made.data.user!.id, made: made.data.user! };
}

describe("app_metadata through auth.admin", () => {
  it("admin.createUser sets it; getUser and getClaims carry it beside the service's own provider", async () => {
    const { email, made } = await adminMadeUser({ plan: "pro", tenant: { id: 7 } });
    expect(made.app_metadata).toEqual({
      plan: "pro",
      tenant: { id: 7 },
      provider: "email",
      providers: ["email"],
    });
    const supabase = client();
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const { data } = await supabase.auth.getUser();
    expect(data.user?.app_metadata).toMatchObject({ plan: "pro", tenant: { id: 7 }, provider: "email" });
    // getUser's session check is read in a batch, its columns named apart: still decoded as the columns say.
    expect(data.user).toMatchObject({ email, user_metadata: {}, is_anonymous: false });
    expect(data.user?.email_confirmed_at).toEqual(expect.any(String));
    // A PostgREST policy or an Edge Function reads it from the verified token.
    const claims = await supabase.auth.getClaims();
    expect(claims.error).toBeNull();
    expect(claims.data?.claims.app_metadata).toEqual({
      plan: "pro",
      tenant: { id: 7 },
      provider: "email",
      providers: ["email"],
    });
  });

  it("admin.updateUserById merges key by key, a null removes a key, and the next token carries the change", async () => {
    const { email, id } = await adminMadeUser({ plan: "free", region: "eu", flags: ["a"] });
    const changed = await admin().auth.admin.updateUserById(id, {
      app_metadata: { plan: "pro", region: null, flags: ["b"] },
    });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.app_metadata).toEqual({
      plan: "pro",
      flags: ["b"],
      provider: "email",
      providers: ["email"],
    });
    const got = await admin().auth.admin.getUserById(id);
    expect(got.data.user?.app_metadata).toEqual(changed.data.user?.app_metadata);
    // A user_metadata change alone leaves it as it is.
    await admin().auth.admin.updateUserById(id, { user_metadata: { team: "ops" } });
    expect((await admin().auth.admin.getUserById(id)).data.user?.app_metadata).toMatchObject({ plan: "pro" });

    // The refresh grant mints from the session check's row: its token has the merged keys.
    const supabase = client();
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const refreshed = await supabase.auth.refreshSession();
    expect(refreshed.data.user?.app_metadata).toMatchObject({ plan: "pro", flags: ["b"] });
    const claims = await supabase.auth.getClaims();
    expect(claims.data?.claims.app_metadata).toEqual({
      plan: "pro",
      flags: ["b"],
      provider: "email",
      providers: ["email"],
    });
  });

  // Threat: an operator's key named `provider` (or a copied GoTrue export) making the user look signed up elsewhere,
  // to a policy that trusts `app_metadata.provider`.
  // Threat: lost data. Two operators (or a backend's parallel jobs) adding different keys at once: a read-merge-write
  // race would keep only the last writer's key.
  it("admin.updateUserById calls racing with different keys all keep theirs", async () => {
    const email = uniqueEmail("race");
    const made = await admin().auth.admin.createUser({
      email,
      password: PASSWORD,
      app_metadata: { base: 1 },
    });
    const id = made.data.user!.id;
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const answers = await Promise.all(
      keys.map((key) => admin().auth.admin.updateUserById(id, { app_metadata: { [key]: key } })),
    );
    expect(answers.map((answer) => answer.error)).toEqual(keys.map(() => null));
    const { data } = await admin().auth.admin.getUserById(id);
    expect(data.user?.app_metadata).toMatchObject({
      base: 1,
      ...Object.fromEntries(keys.map((key) => [key, key])),
    });
  });

  it("provider and providers stay the service's own: a stored key cannot override them", async () => {
    const { email, id, made } = await adminMadeUser({ provider: "google", providers: ["google"], role: "x" });
    expect(made.app_metadata).toMatchObject({ provider: "email", providers: ["email"], role: "x" });
    const changed = await admin().auth.admin.updateUserById(id, { app_metadata: { provider: "saml" } });
    expect(changed.data.user?.app_metadata).toMatchObject({ provider: "email", providers: ["email"] });
    const supabase = client();
    await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const claims = await supabase.auth.getClaims();
    expect(claims.data?.claims.app_metadata).toMatchObject({ provider: "email", providers: ["email"] });
  });

  // Threat: a user granting themselves a role or a plan an app's policies read from app_metadata.
  it("is the service role's alone: a client key or a user's token is refused, and updateUser's data never reaches it", async () => {
    const { email, id } = await adminMadeUser({ plan: "free" });
    const asClient = await client().auth.admin.updateUserById(id, { app_metadata: { plan: "pro" } });
    expect(asClient.error).toMatchObject({ status: 403, code: "not_admin" });
    const made = await client().auth.admin.createUser({ email: uniqueEmail("nope"), app_metadata: { a: 1 } });
    expect(made.error).toMatchObject({ status: 403, code: "not_admin" });

    const supabase = client();
    const { data } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const withUserToken = await svc.request("PUT", `${FACE}/auth/v1/admin/users/${id}`, {
      headers: {
        apikey: SECRET_KEY,
        authorization: `Bearer ${data.session!.access_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ app_metadata: { plan: "pro" } }),
    });
    expect(withUserToken.status).toBe(403);
    // updateUser's `data` is user_metadata; an `app_metadata` field beside it is not read.
    const own = await svc.request("PUT", `${FACE}/auth/v1/user`, {
      headers: {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${data.session!.access_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ data: { plan: "pro" }, app_metadata: { plan: "pro" } }),
    });
    expect(own.status).toBe(200);
    expect((await admin().auth.admin.getUserById(id)).data.user?.app_metadata).toMatchObject({
      plan: "free",
    });
  });

  // Threat: an unbounded JSON column grown by repeated merges, or a hostile nesting overflowing a stack (a 500).
  it("is bounded as user_metadata is: too large or too deep is GoTrue's 400, also when a merge would pass the bound", async () => {
    const big = await admin().auth.admin.createUser({
      email: uniqueEmail("big"),
      app_metadata: { blob: "x".repeat(17 * 1024) },
    });
    expect(big.error).toMatchObject({ status: 400, code: "validation_failed" });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) deep = { deep };
    const nested = await admin().auth.admin.createUser({ email: uniqueEmail("deep"), app_metadata: deep });
    expect(nested.error).toMatchObject({ status: 400, code: "validation_failed" });

    const { id } = await adminMadeUser({ a: "x".repeat(10 * 1024) });
    const grown = await admin().auth.admin.updateUserById(id, { app_metadata: { b: "y".repeat(10 * 1024) } });
    expect(grown.error).toMatchObject({ status: 400, code: "validation_failed" });
    expect((await admin().auth.admin.getUserById(id)).data.user?.app_metadata).not.toHaveProperty("b");
  });

  it("stays off the Nhost face's User resource", async () => {
    const { email } = await adminMadeUser({ plan: "pro" });
    const signIn = await svc.request("POST", "/signin/email-password", {
      json: { email, password: PASSWORD },
      headers: { "cf-connecting-ip": uniqueAddress() },
    });
    const body = (await signIn.json()) as { session: { user: Record<string, unknown> } };
    expect(body.session.user).not.toHaveProperty("appMetadata");
    expect(body.session.user).not.toHaveProperty("app_metadata");
  });
});

describe("one user object in every answer", () => {
  it("getUser, the password and refresh grants, updateUser and the admin namespace list the same identities and factors", async () => {
    const { email, id } = await adminMadeUser({ plan: "pro" });
    // A linked provider identity, as a sign-in with GitHub leaves it (oauth-identities.test.ts makes one that way).
    const linkedAt = Date.now();
    await userD1(id)
      .prepare(
        "INSERT INTO user_providers (id, user_id, provider, provider_user_id, created_at, updated_at) VALUES (?, ?, 'github', ?, ?, ?)",
      )
      .bind(crypto.randomUUID(), id, `gh-${crypto.randomUUID()}`, linkedAt, linkedAt)
      .run();
    const supabase = client();
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    // An unverified TOTP factor (auth-js's mfa.enroll) is listed too.
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp", friendlyName: "app" });
    expect(enrolled.error).toBeNull();

    const shape = (user: { identities?: unknown[]; factors?: unknown[]; app_metadata?: unknown } | null) => ({
      identities: (user?.identities as { provider: string; identity_id: string }[] | undefined)?.map(
        (identity) => `${identity.provider}:${identity.identity_id}`,
      ),
      factors: (user?.factors as { id: string; status: string }[] | undefined)?.map(
        (factor) => `${factor.id}:${factor.status}`,
      ),
      plan: (user?.app_metadata as { plan?: string } | undefined)?.plan,
    });
    const fromGetUser = shape((await supabase.auth.getUser()).data.user);
    expect(fromGetUser.identities).toHaveLength(2);
    expect(fromGetUser.factors).toEqual([`${enrolled.data!.id}:unverified`]);
    expect(fromGetUser.plan).toBe("pro");

    const answers = {
      signInWithPassword: shape(
        (await client().auth.signInWithPassword({ email, password: PASSWORD })).data.user,
      ),
      refreshSession: shape((await supabase.auth.refreshSession()).data.user),
      updateUser: shape((await supabase.auth.updateUser({ data: { seen: true } })).data.user),
      getUserById: shape((await admin().auth.admin.getUserById(id)).data.user),
      updateUserById: shape((await admin().auth.admin.updateUserById(id, { app_metadata: {} })).data.user),
      listUsers: shape(
        (await admin().auth.admin.listUsers({ page: 1, perPage: 50 })).data.users.find(
          (user) => user.id === id,
        ) ?? null,
      ),
    };
    for (const [answer, user] of Object.entries(answers))
      expect({ answer, ...user }).toEqual({ answer, ...fromGetUser });
  });
});
