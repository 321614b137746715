import { describe, expect, it } from "vitest";
import type { WireSession } from "../helpers";
import {
  location,
  openIn,
  postToAcs,
  type SamlOrg,
  samlService,
  startSignIn,
} from "../sso/saml-support/connection";
import { idpMetadataXml, signedResponse, toBase64 } from "../sso/saml-support/idp";
import { admin, type ImportAnswer, importUsers, iso } from "./support";

/**
 * Supabase's SSO moved in through the import API (contract supabase.md §5; what `import-supabase`'s sso.mjs and
 * user-bundles.mjs send): an SSO provider with its SAML provider and domains becomes an organization under the
 * provider's id, with its domains verified and a SAML connection from the IdP's metadata; the SSO user GoTrue made
 * (no password, identity `sso:<provider id>`) is a user with its address. Then a real SAML sign-in (the test IdP,
 * samlify: test/sso/saml-support/) lands as that same user id.
 */

const svc = samlService();
const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";

const importOrgs = async (orgs: unknown[], dryRun = false) => {
  const response = await svc.request("POST", "/admin/import/nhost/orgs", {
    json: { orgs, dryRun },
    headers: admin(),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as ImportAnswer;
};

function provider(overrides: Record<string, unknown> = {}) {
  const id = crypto.randomUUID();
  const domain = `corp-${id.slice(0, 8)}.test`;
  return {
    id,
    domain,
    row: {
      id,
      name: domain,
      domains: [domain.toUpperCase()],
      saml: {
        metadataXml: idpMetadataXml(),
        nameIdFormat: PERSISTENT,
        attributeMapping: { keys: { email: { name: "mail" }, department: { name: "dept" } } },
      },
      enabled: true,
      ...overrides,
    },
  };
}

/** An SSO user as import-supabase sends it: no password, its address confirmed by the IdP, no linked identity. */
function ssoUser(email: string) {
  const id = crypto.randomUUID();
  const now = Date.now();
  return {
    id,
    bundle: {
      system: "supabase",
      id,
      createdAt: iso(now - 86_400_000),
      updatedAt: iso(now - 86_400_000),
      lastSeen: null,
      disabled: false,
      bannedUntil: null,
      displayName: "Jane Corp",
      avatarUrl: "",
      email,
      phoneNumber: null,
      emailVerified: true,
      phoneNumberVerified: false,
      newEmail: null,
      passwordHash: null,
      isAnonymous: false,
      activeMfaType: null,
      totpSecret: null,
      totpSecretUnreadable: false,
      ticket: null,
      ticketExpiresAt: null,
      metadata: {},
      appMetadata: null,
      providers: [],
      securityKeys: [],
      refreshTokens: [],
      factors: [],
    },
  };
}

async function samlOrgOf(orgId: string, domain: string): Promise<SamlOrg> {
  const response = await svc.request("GET", `/admin/orgs/${orgId}/connections`, { headers: admin() });
  expect(response.status).toBe(200);
  const { items: connections } = (await response.json()) as {
    items: { id: string; type: string; saml: { acsUrl: string; spMetadataUrl: string } }[];
  };
  expect(connections).toHaveLength(1);
  const [connection] = connections;
  expect(connection!.type).toBe("saml");
  return {
    orgId,
    domain,
    connectionId: connection!.id,
    spEntityId: connection!.saml.spMetadataUrl,
    acsUrl: connection!.saml.acsUrl,
  };
}

describe("Supabase's SSO providers through the import API", () => {
  // Threat: an SSO user who lands as a new user after the move loses everything of theirs (a takeover the other
  // way round: their data under an id nobody signs in as).
  it("an org with its verified domain and SAML connection; a SAML sign-in lands as the imported SSO user", async () => {
    const { id: orgId, domain, row } = provider();
    const answer = await importOrgs([row]);
    expect(answer.results).toEqual([
      {
        id: orgId,
        outcome: "imported",
        // `mail` is among the attributes the connection reads: only what it can't honour is said.
        warnings: [
          expect.objectContaining({ reason: expect.stringMatching(/"department": not carried/) }),
          expect.objectContaining({ reason: expect.stringMatching(/name_id_format .*persistent/) }),
        ],
      },
    ]);
    const domains = await svc.request("GET", `/admin/orgs/${orgId}/domains`, { headers: admin() });
    expect(((await domains.json()) as { items: { domain: string; verified: boolean }[] }).items).toEqual([
      expect.objectContaining({ domain, verified: true }),
    ]);

    const email = `jane@${domain}`;
    const { id: userId, bundle } = ssoUser(email);
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id: userId, outcome: "imported" }]);

    const org = await samlOrgOf(orgId, domain);
    const { requestId, cookie } = await startSignIn(svc, email);
    const response = await signedResponse({
      spEntityId: org.spEntityId,
      acsUrl: org.acsUrl,
      nameId: "00u1abcd-persistent-subject",
      nameIdFormat: PERSISTENT,
      inResponseTo: requestId,
      attributes: { mail: [email] },
    });
    const acs = await postToAcs(svc, org, toBase64(response));
    const landed = location(await openIn(svc, location(acs), cookie));
    const refreshToken = landed.searchParams.get("refreshToken");
    expect(refreshToken, landed.href).toBeTruthy();
    const session = (await (await svc.post("/token", { refreshToken })).json()) as WireSession;
    expect(session.user?.id).toBe(userId);

    // A second run of the same provider writes nothing.
    expect((await importOrgs([row])).results).toEqual([
      expect.objectContaining({ id: orgId, outcome: "unchanged" }),
    ]);
  });

  it("an email mapped from an attribute the service does not read is listed as not carried", async () => {
    const { id, row } = provider();
    const mapped = { ...row, saml: { ...row.saml, attributeMapping: { keys: { email: { name: "upn" } } } } };
    const answer = await importOrgs([mapped], true);
    expect(answer.results).toEqual([
      {
        id,
        outcome: "imported",
        warnings: [
          expect.objectContaining({ reason: expect.stringMatching(/email from "upn"/), notCarried: true }),
          expect.objectContaining({ reason: expect.stringMatching(/name_id_format/) }),
        ],
      },
    ]);
    // A dry run wrote nothing.
    expect((await svc.request("GET", `/admin/orgs/${id}`, { headers: admin() })).status).toBe(404);
  });

  // Threat: an import must not take a domain another org here verified (its members' sign-ins would change hands).
  it("a provider whose domain another org verified, or whose metadata is no metadata, is skipped whole", async () => {
    const first = provider();
    await importOrgs([first.row]);
    const { id, row } = provider({ domains: [first.domain, "fresh-domain.test"] });
    const broken = provider({ saml: { metadataXml: "<not-metadata/>" } });
    const answer = await importOrgs([row, broken.row]);
    expect(answer.results).toEqual([
      {
        id,
        outcome: "skipped",
        reasons: [
          expect.objectContaining({ id: first.domain, reason: "verified by another organization here" }),
        ],
      },
      {
        id: broken.id,
        outcome: "skipped",
        reasons: [
          expect.objectContaining({
            table: "auth.saml_providers",
            reason: expect.stringMatching(/metadata/),
          }),
        ],
      },
    ]);
    expect((await svc.request("GET", `/admin/orgs/${id}`, { headers: admin() })).status).toBe(404);
  });

  // Loss closed (issue 44): an SSO provider deleted at Supabase before the cut-over lived on here, its domains still
  // verified and its IdP still signing people in. Threat kept out: the removal pass touching an org made here (no
  // ledger row of Supabase's runs), whose domains and connection an operator set up, or the provider's users.
  it("an org whose provider Supabase deleted goes with its domains by the removal pass; an org made here stays", async () => {
    const gone = provider();
    const kept = provider();
    await importOrgs([gone.row, kept.row]);
    const { id: userId, bundle } = ssoUser(`jane@${gone.domain}`);
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id: userId, outcome: "imported" }]);
    const made = await svc.request("POST", "/admin/orgs", {
      headers: admin(),
      json: { name: "Made here", ownerUserId: userId },
    });
    expect(made.status).toBe(201);
    const native = ((await made.json()) as { id: string }).id;

    const ledger = async () => {
      const page = await svc.request(
        "GET",
        "/admin/import/nhost/ledger?system=supabase&kind=org&limit=1000",
        {
          headers: admin(),
        },
      );
      expect(page.status).toBe(200);
      return ((await page.json()) as { items: string[] }).items;
    };
    expect(await ledger()).toEqual(expect.arrayContaining([gone.id, kept.id]));
    expect(await ledger()).not.toContain(native);

    const remove = async (ids: string[], dryRun: boolean) => {
      const response = await svc.request("POST", "/admin/import/nhost/removals", {
        headers: admin(),
        json: { system: "supabase", kind: "org", ids, dryRun },
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { results: unknown[] }).results;
    };
    const status = async (orgId: string) =>
      (await svc.request("GET", `/admin/orgs/${orgId}`, { headers: admin() })).status;
    expect(await remove([gone.id], true)).toEqual([{ id: gone.id, outcome: "deleted" }]);
    expect(await status(gone.id)).toBe(200);

    expect(await remove([gone.id, native], false)).toEqual([
      { id: gone.id, outcome: "deleted" },
      { id: native, outcome: "absent" },
    ]);
    expect(await status(gone.id)).toBe(404);
    expect(await status(kept.id)).toBe(200);
    expect(await status(native)).toBe(200);
    expect(await ledger()).not.toContain(gone.id);
    // Its domain went with it: another provider of that domain is an org again, not "verified by another organization".
    const again = provider({ domains: [gone.domain] });
    expect((await importOrgs([again.row])).results).toEqual([
      expect.objectContaining({ id: again.id, outcome: "imported" }),
    ]);
    // The provider's user stays, as in Supabase.
    expect((await svc.request("GET", `/admin/users/${userId}`, { headers: admin() })).status).toBe(200);
  });
});
