// The passkeys' backup state (issue 47, docs/passkeys.md "Backup state", src/auth/webauthn/backup-state.ts): WebAuthn
// L3 §6.1's flags BE (backup eligible) and BS (backed up), stored at registration, BS moved by every sign-in, shown
// in the admin API, the console and the account center (six languages), "unknown" for a key from before.
// Threats: an operator or user told a device-bound key is synced (they lose the device and the only key with it), or
// a guess shown as a fact for a key whose flags were never seen; a malformed authenticator's BE=0 BS=1 stored; an
// assertion whose BE differs from the registration's (another authenticator, or a tampered record) accepted.
import { env } from "cloudflare:test";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../../src/openapi/document";
import { SECURITY_ON, signedInBrowser } from "../../account-center/security-support";
import { FLAGS, SoftwareAuthenticator } from "../../fakes/authenticator";
import { expectError, SERVER, service, signUp, type WireSession } from "../../helpers";
import { userD1 } from "../../support/shards";

const svc = service({ ...SECURITY_ON, AUTH_LOCALE_ALLOWED_LOCALES: "en,de,fr,es,pt,ja" });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const PRESENT = FLAGS.UP | FLAGS.UV;
const SYNCED = PRESENT | FLAGS.BE | FLAGS.BS;
const SYNCABLE = PRESENT | FLAGS.BE;

async function ok<T>(response: Response): Promise<T> {
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body as T;
}

/** Registers a key made with `flags` on `device`; the raw answer (200 with the key's id, or a refusal). */
async function register(session: WireSession, device: SoftwareAuthenticator, flags: number) {
  const options = await ok<PublicKeyCredentialCreationOptionsJSON>(
    await svc.post("/user/webauthn/add", {}, session.accessToken),
  );
  const credential = await device.create(options, { flags });
  return svc.post("/user/webauthn/verify", { credential }, session.accessToken);
}

const keyId = async (answer: Response) => (await ok<{ id: string }>(answer)).id;

/** A sign-in by the device's `index`th credential, its authenticator data's flags exactly `flags`. */
async function signIn(email: string, device: SoftwareAuthenticator, index: number, flags: number) {
  const options = await ok<PublicKeyCredentialRequestOptionsJSON>(
    await svc.post("/signin/webauthn", { email }),
  );
  const credential = await device.get(options, { credential: device.credentials[index], flags });
  return svc.post("/signin/webauthn/verify", { credential });
}

type Backup = { backupEligible: boolean | null; backupState: boolean | null };
async function backupOf(userId: string): Promise<Record<string, Backup>> {
  const listed = await ok<{ securityKeys: ({ id: string } & Backup)[] }>(
    await svc.request("GET", `/admin/users/${userId}/security-keys`, { headers: ADMIN }),
  );
  return Object.fromEntries(
    listed.securityKeys.map(({ id, backupEligible, backupState }) => [id, { backupEligible, backupState }]),
  );
}

/** A key as every key registered before the columns: both flags unknown. */
const forgetFlags = (userId: string, id: string) =>
  userD1(userId)
    .prepare("UPDATE security_keys SET backup_eligible = NULL, backup_state = NULL WHERE id = ?")
    .bind(id)
    .run();

const state = (backupEligible: boolean | null, backupState: boolean | null) => ({
  backupEligible,
  backupState,
});

describe("the backup flags through registration and sign-in", () => {
  it("stored as registered, BS moved by each sign-in, BE=0 BS=1 and a changed BE refused (400)", async () => {
    const session = await signUp(svc);
    const email = session.user.email;
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    // §6.1: a credential that cannot be backed up is not backed up. Refused, nothing stored.
    await expectError(await register(session, device, PRESENT | FLAGS.BS), 400, "invalid-request");
    const synced = await keyId(await register(session, device, SYNCED)); // credentials[1]
    const syncable = await keyId(await register(session, device, SYNCABLE)); // credentials[2]
    const bound = await keyId(await register(session, device, PRESENT)); // credentials[3]
    expect(await backupOf(session.user.id)).toEqual({
      [synced]: state(true, true),
      [syncable]: state(true, false),
      [bound]: state(false, false),
    });

    // The password manager synced the passkey since: the sign-in says BS=1, stored with the counter.
    expect((await signIn(email, device, 2, SYNCABLE | FLAGS.BS)).status).toBe(200);
    // A counterless passkey (most platform ones) reporting BS=0 now: written after the answer, as its last use is.
    device.credentials[1]!.counter = -1;
    expect((await signIn(email, device, 1, SYNCABLE)).status).toBe(200);
    // §7.2: BE is the registration's for good; an assertion saying otherwise, or BE=0 with BS=1, signs nobody in.
    await expectError(await signIn(email, device, 3, SYNCABLE), 400, "invalid-request");
    await expectError(await signIn(email, device, 3, PRESENT | FLAGS.BS), 400, "invalid-request");
    expect(await backupOf(session.user.id)).toEqual({
      [synced]: state(true, false),
      [syncable]: state(true, true),
      [bound]: state(false, false),
    });

    // A key from before the columns: unknown (null), never a guess, until its next sign-in reports both.
    await forgetFlags(session.user.id, bound);
    expect((await backupOf(session.user.id))[bound]).toEqual(state(null, null));
    expect((await signIn(email, device, 3, PRESENT)).status).toBe(200);
    expect((await backupOf(session.user.id))[bound]).toEqual(state(false, false));
  });
});

describe("the backup state where passkeys are listed", () => {
  it("the console's section and the API reference: synced, can sync, this device only, unknown", async () => {
    const session = await signUp(svc);
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    await register(session, device, SYNCED);
    await register(session, device, SYNCABLE);
    await register(session, device, PRESENT);
    await forgetFlags(session.user.id, await keyId(await register(session, device, PRESENT)));

    const login = await svc.request("POST", "/admin/console/login", {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (
      await svc.request("GET", `/admin/console/users/${session.user.id}`, { headers: { cookie } })
    ).text();
    const cells = [...page.matchAll(/data-label="Backup">(.*?)<\/td>/g)].map((match) => match[1]);
    expect(cells).toEqual([
      '<span class="badge on">synced</span>',
      'can sync<br><small class="muted">not backed up yet</small>',
      "this device only",
      expect.stringContaining('<span class="muted">unknown</span>'),
    ]);

    const doc = (await (await svc.get("/openapi.json")).json()) as OpenApiDocument;
    const listing = JSON.stringify(doc.paths["/admin/users/{id}/security-keys"]!.get);
    expect(listing).toContain("WebAuthn's BE flag");
    expect(listing).toContain("WebAuthn's BS flag");
  });

  const WORDS: Record<string, [string, string, string, string]> = {
    en: ["Synced", "Not synced yet", "This device only", "Unknown"],
    de: ["Synchronisiert", "Noch nicht synchronisiert", "Nur dieses Gerät", "Unbekannt"],
    fr: ["Synchronisée", "Pas encore synchronisée", "Cet appareil uniquement", "Inconnue"],
    es: ["Sincronizada", "Aún sin sincronizar", "Solo este dispositivo", "Desconocida"],
    pt: ["Sincronizada", "Ainda não sincronizada", "Apenas este dispositivo", "Desconhecido"],
    ja: ["同期済み", "未同期", "このデバイスのみ", "不明"],
  };

  it("the account center's list, in each of the six languages", { timeout: 30_000 }, async () => {
    const { browser, api } = await signedInBrowser(svc, "pk-backup");
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    await register(api, device, SYNCED);
    await register(api, device, SYNCABLE);
    await register(api, device, PRESENT);
    await forgetFlags(api.user.id, await keyId(await register(api, device, PRESENT)));
    for (const [lang, words] of Object.entries(WORDS)) {
      const page = await (await browser.get(`/account?ui_locales=${lang}`)).text();
      expect(page).toContain(`<html lang="${lang}">`);
      const cells = [...page.matchAll(/data-backup="([a-z-]+)">([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
      expect(cells, lang).toEqual([
        ["synced", words[0]],
        ["not-synced", words[1]],
        ["device-bound", words[2]],
        ["unknown", words[3]],
      ]);
    }
  });
});
