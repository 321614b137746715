import { beforeAll, describe, expect, it } from "vitest";
import { FACE, SECRET_KEY, supabaseClient, supabaseService } from "../faces/supabase/support";
import { PASSWORD } from "../helpers";
import { importUsers, iso, nhostBcrypt, nhostUser } from "./support";

/**
 * The import API's Supabase users (`system: "supabase"`, what `npm run admin -- import-supabase` sends; contract
 * supabase.md §5): the service's default role and language, app_metadata, a timed ban, factors under GoTrue's ids,
 * and GoTrue's mailed token hashes as links the Supabase face takes. Through the real HTTP surface: the import API,
 * then supabase-js and GoTrue's /verify link. The command against a real Supabase schema is tested end to end in
 * test/compat/supabase-import.test.ts.
 */

const svc = supabaseService({ AUTH_MFA_ENABLED: "true", AUTH_USER_DEFAULT_ALLOWED_ROLES: "user,me,editor" });
const adminClient = () => supabaseClient(svc, SECRET_KEY);
let hash: string;
const DAY = 86_400_000;
const hex56 = () =>
  [...crypto.getRandomValues(new Uint8Array(28))].map((b) => b.toString(16).padStart(2, "0")).join("");

beforeAll(async () => {
  hash = await nhostBcrypt(PASSWORD);
});

/** A user as import-supabase sends it: no role, roles or locale (GoTrue has none). */
function supabaseUser(overrides: Record<string, unknown> = {}) {
  const id = crypto.randomUUID();
  const now = Date.now();
  return {
    id,
    email: `sb-${id.slice(0, 8)}@example.com`,
    bundle: {
      system: "supabase",
      id,
      createdAt: iso(now - 10 * DAY),
      updatedAt: iso(now - DAY),
      lastSeen: null,
      disabled: false,
      bannedUntil: null,
      displayName: "",
      avatarUrl: "",
      email: `sb-${id.slice(0, 8)}@example.com`,
      phoneNumber: null,
      emailVerified: true,
      phoneNumberVerified: false,
      newEmail: null,
      passwordHash: hash,
      isAnonymous: false,
      activeMfaType: null,
      totpSecret: null,
      totpSecretUnreadable: false,
      ticket: null,
      ticketExpiresAt: null,
      metadata: { plan: "team" },
      appMetadata: { tier: "gold" },
      providers: [],
      securityKeys: [],
      refreshTokens: [],
      factors: [],
      ...overrides,
    },
  };
}

describe("Supabase users through the import API", () => {
  it("keep app_metadata, user_metadata, and phone factors under GoTrue's ids", async () => {
    const factorId = crypto.randomUUID();
    const factor = {
      id: factorId,
      type: "phone",
      friendlyName: "work",
      status: "verified",
      phone: "14155552671",
      createdAt: iso(Date.now() - DAY),
      updatedAt: iso(Date.now() - DAY),
    };
    const { id, bundle } = supabaseUser({ factors: [factor] });
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "imported" }]);
    const { data } = await adminClient().auth.admin.getUserById(id);
    expect(data.user?.app_metadata).toMatchObject({ tier: "gold" });
    expect(data.user?.user_metadata).toMatchObject({ plan: "team" });
    const factors = await adminClient().auth.admin.mfa.listFactors({ userId: id });
    expect(factors.data?.factors).toEqual([
      expect.objectContaining({
        id: factorId,
        factor_type: "phone",
        friendly_name: "work",
        status: "verified",
      }),
    ]);
    // The same again writes nothing; a factor Supabase no longer has goes.
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "unchanged" }]);
    expect((await importUsers(svc, [{ ...bundle, factors: [] }])).results).toEqual([
      { id, outcome: "updated" },
    ]);
    expect((await adminClient().auth.admin.mfa.listFactors({ userId: id })).data?.factors).toEqual([]);
  });

  // Threat: a ban that did not survive the move would let a banned user back in.
  it("a timed ban stays: the password sign-in is refused, the ban's end is shown", async () => {
    const until = iso(Date.now() + DAY);
    const { id, email, bundle } = supabaseUser({ disabled: true, bannedUntil: until });
    await importUsers(svc, [bundle]);
    const refused = await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD });
    expect(refused.error).toMatchObject({ code: "user_banned" });
    expect((await adminClient().auth.admin.getUserById(id)).data.user?.banned_until).toBe(until);
  });

  // Threat: a mailed link is single use; one carried from Supabase must not confirm twice.
  it("GoTrue's mailed link (recovery, followed as a magic link, under PKCE's prefix) signs in once", async () => {
    const tokenHash = hex56();
    const { id, bundle } = supabaseUser({
      ticket: `passwordReset:${tokenHash}`,
      ticketExpiresAt: iso(Date.now() + DAY),
    });
    await importUsers(svc, [bundle]);
    const link = `${FACE}/auth/v1/verify?token=pkce_${tokenHash}&type=magiclink&redirect_to=http://localhost:3000`;
    const followed = await svc.request("GET", link);
    expect(followed.status).toBe(303);
    const landed = new URL(followed.headers.get("location")!);
    expect(new URLSearchParams(landed.hash.slice(1)).get("access_token")).toEqual(expect.any(String));
    const again = await svc.request("GET", link);
    expect(new URLSearchParams(new URL(again.headers.get("location")!).hash.slice(1)).get("error_code")).toBe(
      "otp_expired",
    );
    expect(id).toBeTruthy();
  });

  it("a link of another kind, or a uuid ticket in a Supabase row, is not taken; a GoTrue hash in a Nhost row is left", async () => {
    const tokenHash = hex56();
    const { bundle } = supabaseUser({
      ticket: `verifyEmail:${tokenHash}`,
      ticketExpiresAt: iso(Date.now() + DAY),
    });
    await importUsers(svc, [bundle]);
    // A confirmation token is not a recovery link (GoTrue's verifyTokenHash looks in its own column only).
    const wrongType = await supabaseClient(svc).auth.verifyOtp({ token_hash: tokenHash, type: "recovery" });
    expect(wrongType.error).toMatchObject({ code: "otp_expired" });
    const right = await supabaseClient(svc).auth.verifyOtp({ token_hash: tokenHash, type: "email" });
    expect(right.error).toBeNull();

    const odd = supabaseUser({
      ticket: `verifyEmail:${crypto.randomUUID()}`,
      ticketExpiresAt: iso(Date.now() + DAY),
    });
    const nhost = await nhostUser({ ticket: `verifyEmail:${hex56()}` }, hash);
    const { results } = await importUsers(svc, [odd.bundle, nhost.bundle]);
    for (const result of results)
      expect(result.warnings).toContainEqual(
        expect.objectContaining({ reason: expect.stringMatching(/ticket/) }),
      );
  });

  it("get the service's default role and allowed roles, or the ones a row does send", async () => {
    const plain = supabaseUser();
    const editor = supabaseUser({ defaultRole: "editor", roles: ["editor"] });
    await importUsers(svc, [plain.bundle, editor.bundle]);
    const hasura = async (email: string) => {
      const signedIn = await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD });
      return JSON.parse(atob(signedIn.data.session!.access_token.split(".")[1]!))[
        "https://hasura.io/jwt/claims"
      ];
    };
    expect(await hasura(plain.email)).toMatchObject({
      "x-hasura-default-role": "user",
      "x-hasura-allowed-roles": ["user", "me", "editor"],
    });
    expect(await hasura(editor.email)).toMatchObject({ "x-hasura-default-role": "editor" });
  });
});
