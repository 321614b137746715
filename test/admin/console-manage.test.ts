// The console as an operator runs the service with it: the overview's numbers and charts, the user list's filters,
// order and CSV export, creating and editing users, and sending their mails again. Every action goes through the
// console's Origin and CSRF check (console.test.ts proves the refusals) and is audited.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  auditTypesOf,
  mailbox,
  NO_VERIFICATION,
  SERVER,
  service,
  signUp,
  uniqueAddress,
  uniqueEmail,
} from "../helpers";
import { png } from "../storage/fixtures";
import { userD1 } from "../support/shards";

const svc = service({ ...NO_VERIFICATION, AUTH_ANONYMOUS_USERS_ENABLED: "true" });
const SECRET = String(env.AUTH_ADMIN_SECRET);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const postForm = (path: string, values: Record<string, string>, cookie: string) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
  });

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await postForm("/login", { secret: SECRET }, "");
  const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await svc.request("GET", BASE, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

const getPage = async (cookie: string, path: string) => {
  const response = await svc.request("GET", `${BASE}${path}`, { headers: { cookie } });
  return { status: response.status, text: await response.text(), response };
};

describe("the console's overview", () => {
  it("counts users by state and draws 30 days of activity as described SVG charts", async () => {
    const { cookie } = await signIn();
    const before = await getPage(cookie, "/overview");
    const total = (text: string) =>
      Number(/<span class="value"><a [^>]*>(\d+)<\/a><\/span><span class="label">users</.exec(text)![1]);
    await signUp(svc, uniqueEmail("overview"));
    await svc.post("/signin/anonymous", {});
    const after = await getPage(cookie, "/overview");
    expect(after.status).toBe(200);
    expect(total(after.text)).toBeGreaterThanOrEqual(total(before.text) + 2);
    expect(after.text).toMatch(/<svg [^>]*role="img" aria-label="New users: \d+ in the last 30 days/);
    expect(after.text).toContain('aria-label="Sign-ins:');
    expect(after.text).toContain("Refresh-token replays");
    expect((after.text.match(/<rect /g) ?? []).length).toBe(4 * 30);
    expect(after.text).not.toContain("<script");
  });
});

describe("the console's user list", () => {
  it("filters by status, role, MFA and creation day, orders, and keeps the filters across the CSV export", async () => {
    const { cookie, csrf } = await signIn();
    const tag = `filter${crypto.randomUUID().slice(0, 6)}`;
    const a = await signUp(svc, `${tag}-a@example.com`);
    const b = await signUp(svc, `${tag}-b@example.com`);
    await postForm(`/users/${b.user.id}/disable`, { csrf }, cookie);
    const disabled = await getPage(cookie, `/users?search=${tag}&status=disabled`);
    expect(disabled.text).toContain(`${tag}-b@example.com`);
    expect(disabled.text).not.toContain(`${tag}-a@example.com`);
    const byRole = await getPage(cookie, `/users?search=${tag}&role=editor`);
    expect(byRole.text).toContain("No user matches");
    const future = await getPage(cookie, `/users?search=${tag}&createdFrom=2999-01-01`);
    expect(future.text).toContain("No user matches");
    const today = new Date().toISOString().slice(0, 10);
    const since = await getPage(
      cookie,
      `/users?search=${tag}&createdFrom=${today}&createdTo=${today}&mfa=off`,
    );
    expect(since.text).toContain(`${tag}-a@example.com`);
    const byEmail = await getPage(cookie, `/users?search=${tag}&sort=email`);
    expect(byEmail.text.indexOf(`${tag}-a@`)).toBeLessThan(byEmail.text.indexOf(`${tag}-b@`));
    const newest = await getPage(cookie, `/users?search=${tag}`);
    expect(newest.text.indexOf(`${tag}-b@`)).toBeLessThan(newest.text.indexOf(`${tag}-a@`));
    expect(newest.text).toContain(`users.csv?search=${tag}`);
    // A malformed filter is a view, not an error: ignored.
    expect((await getPage(cookie, "/users?status=nonsense&createdFrom=yesterday")).status).toBe(200);
    expect(a.user.id).toBeTruthy();
  });

  // Threat: a display name chosen by a user that becomes a formula in the operator's spreadsheet (CSV injection).
  it("exports the filtered users as CSV, with formulas defused", async () => {
    const { cookie, csrf } = await signIn();
    const tag = `csv${crypto.randomUUID().slice(0, 6)}`;
    const { user } = await signUp(svc, `${tag}@example.com`);
    await postForm(
      `/users/${user.id}/edit`,
      {
        csrf,
        displayName: '=HYPERLINK("https://evil.example")',
        roles: "user, me",
        defaultRole: "user",
        metadata: "{}",
      },
      cookie,
    );
    const { status, text, response } = await getPage(cookie, `/users.csv?search=${tag}`);
    expect(status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(response.headers.get("content-disposition")).toContain("users.csv");
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,email,phoneNumber,displayName,createdAt,lastSeen,disabled,emailVerified,isAnonymous,defaultRole,roles,activeMfaType",
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`${tag}@example.com`);
    expect(lines[1]).toContain(`"'=HYPERLINK(""https://evil.example"")"`);
    expect(await auditTypesOf(user.id)).toContain("admin.user.update");
  });

  // Threat: a formula the first-character check misses. Spreadsheets trim leading white space before they look for
  // `=`, and East Asian locales read the full-width `＝ ＋ － ＠` as the ASCII signs; OWASP also lists tab and CR. The
  // names are written to D1 directly: the export must not rely on every way into `users` applying the sign-up rule
  // for display names (which refuses tab, `－` and `＠`, and accepts the others).
  it.each(["  =1+1", "\t=cmd", " \t=cmd", "\r=cmd", "＝1+1", "＋1", "－1", "＠SUM(1)", "\u3000＝1+1"])(
    "defuses %j in the CSV export",
    async (displayName) => {
      const { cookie } = await signIn();
      const tag = `csvws${crypto.randomUUID().slice(0, 6)}`;
      const { user } = await signUp(svc, `${tag}@example.com`);
      await userD1(user.id)
        .prepare("UPDATE users SET display_name = ? WHERE id = ?")
        .bind(displayName, user.id)
        .run();
      const { status, text } = await getPage(cookie, `/users.csv?search=${tag}`);
      expect(status).toBe(200);
      const row = text.slice(text.indexOf("\r\n") + 2);
      const quoted = /[\r\n]/.test(displayName);
      expect(row).toContain(quoted ? `,"'${displayName}",` : `,'${displayName},`);
    },
  );
});

describe("creating and editing users in the console", () => {
  it("creates a user (verified or not), refuses a taken address on the page, and audits it", async () => {
    const { cookie, csrf } = await signIn();
    const email = uniqueEmail("console-create");
    const created = await postForm(
      "/users/create",
      { csrf, email, password: "a console passphrase", emailVerified: "yes", displayName: "Annie Easley" },
      cookie,
    );
    expect(created.status).toBe(303);
    const userPath = new URL(created.headers.get("location")!, SERVER).pathname;
    const detail = await getPage(cookie, userPath.slice(`/auth/v1${BASE}`.length));
    expect(detail.text).toContain("Annie Easley");
    expect(await auditTypesOf(userPath.split("/").pop()!)).toContain("admin.user.create");
    expect(
      (await svc.post("/signin/email-password", { email, password: "a console passphrase" })).status,
    ).toBe(200);
    const again = await postForm("/users/create", { csrf, email }, cookie);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("email already in use");
    expect((await postForm("/users/create", { email: uniqueEmail("no-csrf") }, cookie)).status).toBe(403);
  });

  it("edits display name, roles, default role, metadata and verification; says why an edit is refused", async () => {
    const { cookie, csrf } = await signIn();
    const { user } = await signUp(svc, uniqueEmail("console-edit"));
    const saved = await postForm(
      `/users/${user.id}/edit`,
      {
        csrf,
        displayName: "Katherine G. Johnson",
        roles: "user, editor",
        defaultRole: "editor",
        metadata: '{"team":"orbits"}',
        emailVerified: "yes",
      },
      cookie,
    );
    expect(saved.status).toBe(303);
    const api = await svc.request("GET", `/admin/users/${user.id}`, {
      headers: { "x-hasura-admin-secret": SECRET },
    });
    expect(await api.json()).toMatchObject({
      displayName: "Katherine G. Johnson",
      roles: ["user", "editor"],
      defaultRole: "editor",
      metadata: { team: "orbits" },
      emailVerified: true,
    });
    const badJson = await postForm(
      `/users/${user.id}/edit`,
      { csrf, roles: "user", defaultRole: "user", metadata: "{nope" },
      cookie,
    );
    expect(badJson.status).toBe(400);
    expect(await badJson.text()).toContain("metadata: not JSON");
    const badRole = await postForm(
      `/users/${user.id}/edit`,
      { csrf, roles: "user", defaultRole: "admin", metadata: "{}" },
      cookie,
    );
    expect(badRole.status).toBe(400);
    expect(await badRole.text()).toContain("default role must be in allowed roles");
  });

  it("sends the verification and the reset mail again", async () => {
    const verifying = service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true" });
    const email = uniqueEmail("console-mails");
    await verifying.post("/signup/email-password", { email, password: "correct horse battery" });
    const { cookie, csrf } = await signIn();
    const list = await getPage(cookie, `/users?search=${encodeURIComponent(email)}`);
    const id = new RegExp(`/users/([0-9a-f-]{36})">${email}`).exec(list.text)![1]!;
    const detail = await getPage(cookie, `/users/${id}`);
    expect(detail.text).toContain("Send the verification mail again");
    const before = (await mailbox(svc, email)).length;
    expect((await postForm(`/users/${id}/send-verification`, { csrf }, cookie)).status).toBe(303);
    expect((await postForm(`/users/${id}/send-reset`, { csrf }, cookie)).status).toBe(303);
    const mails = await mailbox(svc, email);
    expect(mails.length).toBe(before + 2);
    expect(await auditTypesOf(id)).toEqual(
      expect.arrayContaining(["admin.user.send-verification", "admin.user.send-reset"]),
    );
  });
});

describe("OAuth2 clients in the console", () => {
  const clientForm = (values: Record<string, string | string[]>) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(values))
      for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
    return params.toString();
  };
  const post = (path: string, body: string, cookie: string) =>
    svc.request("POST", `${BASE}${path}`, {
      body,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
    });

  it("creates a client (its secret shown once), edits it, rotates the secret, shows who uses it, deletes it", async () => {
    const provider = service({ ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    const { cookie, csrf } = await signIn();
    const created = await post(
      "/clients/create",
      clientForm({
        csrf,
        clientName: "Console Notes",
        redirectUris: "https://notes.example.com/cb\nhttps://notes.example.com/cb2",
        scopes: ["openid", "email"],
        tokenEndpointAuthMethod: "client_secret_basic",
      }),
      cookie,
    );
    expect(created.status).toBe(200);
    const page = await created.text();
    const secret = /<code class="secret">(ocs_[^<]+)<\/code>/.exec(page)?.[1];
    const clientId = /<dd><code>(oc_[^<]+)<\/code><\/dd>/.exec(page)?.[1];
    expect(secret).toBeTruthy();
    expect(clientId).toBeTruthy();
    // Shown once: the client's page afterwards has no secret.
    const later = await getPage(cookie, `/clients/${clientId}`);
    expect(later.text).not.toContain(secret!);
    expect(later.text).toContain("No live grant.");
    // The secret works at the token endpoint (client credentials are not granted: unauthorized_client, not invalid_client).
    const basic = `Basic ${btoa(`${clientId}:${secret}`)}`;
    const token = await provider.request("POST", "/oauth2/token", {
      body: "grant_type=client_credentials",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
    });
    expect(((await token.json()) as { error?: string }).error).not.toBe("invalid_client");

    const edited = await post(
      `/clients/${clientId}/edit`,
      clientForm({
        csrf,
        clientName: "Console Notes 2",
        redirectUris: "https://notes.example.com/cb",
        scopes: ["openid"],
        // FedCM (docs/fedcm.md): the relying-party origins beside the redirect URIs, and the prompt's links.
        fedcmOrigins: "https://notes.example.com\nhttp://localhost:5173",
        policyUri: "https://notes.example.com/privacy",
        tosUri: "",
      }),
      cookie,
    );
    expect(edited.status).toBe(303);
    expect((await getPage(cookie, `/clients/${clientId}`)).text).toContain(
      "https://notes.example.com\nhttp://localhost:5173</textarea>",
    );
    const api = await svc.request("GET", `/admin/oauth2/clients/${clientId}`, {
      headers: { "x-hasura-admin-secret": SECRET },
    });
    expect(await api.json()).toMatchObject({
      clientName: "Console Notes 2",
      redirectUris: ["https://notes.example.com/cb"],
      scopes: ["openid"],
      fedcmOrigins: ["https://notes.example.com", "http://localhost:5173"],
      policyUri: "https://notes.example.com/privacy",
      tosUri: null,
    });
    // An origin with a path is not what a browser sends: refused in place, naming the field.
    const badOrigin = await post(
      `/clients/${clientId}/edit`,
      clientForm({
        csrf,
        clientName: "Console Notes 2",
        redirectUris: "https://notes.example.com/cb",
        fedcmOrigins: "https://notes.example.com/app",
      }),
      cookie,
    );
    expect(badOrigin.status).toBe(400);
    expect(await badOrigin.text()).toContain("fedcmOrigins");
    const invalid = await post(
      `/clients/${clientId}/edit`,
      clientForm({ csrf, clientName: "", redirectUris: "not a uri" }),
      cookie,
    );
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain("clientName");

    const rotated = await post(`/clients/${clientId}/rotate-secret`, clientForm({ csrf }), cookie);
    const newSecret = /<code class="secret">(ocs_[^<]+)<\/code>/.exec(await rotated.text())?.[1];
    expect(newSecret).toBeTruthy();
    expect(newSecret).not.toBe(secret);

    expect((await post(`/clients/${clientId}/delete`, clientForm({ csrf }), cookie)).status).toBe(403);
    const deleted = await post(`/clients/${clientId}/delete`, clientForm({ csrf, confirm: "yes" }), cookie);
    expect(deleted.status).toBe(303);
    expect((await getPage(cookie, `/clients/${clientId}`)).status).toBe(404);
    const audited = await env.DB.prepare(
      "select type from audit_events where json_extract(detail, '$.clientId') = ?",
    )
      .bind(clientId!)
      .all<{ type: string }>();
    expect(audited.results.map((row) => row.type)).toEqual(
      expect.arrayContaining([
        "admin.oauth2.client-create",
        "admin.oauth2.client-update",
        "admin.oauth2.client-secret-rotate",
        "admin.oauth2.client-delete",
      ]),
    );
  });
});

describe("the console's audit log", () => {
  it("filters by user (email), type, address and days, names users by email and shows details in words", async () => {
    const { cookie } = await signIn();
    const email = uniqueEmail("audit-filter");
    const { user } = await signUp(svc, email);
    const address = uniqueAddress();
    await svc.request("POST", "/signin/email-password", {
      json: { email, password: "not the password at all" },
      headers: { "cf-connecting-ip": address },
    });
    const byUser = await getPage(cookie, `/audit?user=${encodeURIComponent(email)}&type=signin.failure`);
    expect(byUser.status).toBe(200);
    expect(byUser.text).toContain(`<td class="tight">signin.failure</td>`);
    // A failed sign-in names the account by its address: the filter finds it too.
    expect(byUser.text).toContain(`<dt>email</dt><dd>${email}</dd>`);
    expect(byUser.text).toContain(address);
    expect(byUser.text).not.toContain(`<td class="tight">signup</td>`);
    const byAddress = await getPage(cookie, `/audit?ip=${encodeURIComponent(address)}`);
    expect(byAddress.text).toContain(email);
    const today = new Date().toISOString().slice(0, 10);
    expect((await getPage(cookie, `/audit?user=${user.id}&from=${today}&to=${today}`)).text).toContain(
      `<td class="tight">signup</td>`,
    );
    expect((await getPage(cookie, `/audit?user=${user.id}&from=2999-01-01`)).text).toContain("No event.");
    const unknown = await getPage(cookie, `/audit?user=${encodeURIComponent(uniqueEmail("nobody"))}`);
    expect(unknown.text).toContain("No user with the address");
    // Details as words, not a JSON dump.
    expect(byUser.text).toMatch(/<dl class="detail">/);
  });
});

describe("storage in the console", () => {
  const STORAGE = `${SERVER}/storage/v1`;

  it("lists buckets and a bucket's files with image previews, edits the bucket's settings, deletes a file", async () => {
    const bucketId = `console-${crypto.randomUUID().slice(0, 8)}`;
    const made = await svc.request("POST", `${STORAGE}/buckets`, {
      json: { id: bucketId },
      headers: { "x-hasura-admin-secret": SECRET },
    });
    expect(made.status).toBe(201);
    const session = await signUp(svc, uniqueEmail("console-storage"));
    const { user } = session;
    const form = new FormData();
    form.append("bucket-id", bucketId);
    form.append("file[]", new Blob([png(4, 3)], { type: "image/png" }), "pixel.png");
    const uploaded = await svc.request("POST", `${STORAGE}/files`, {
      body: form,
      token: session.accessToken,
    });
    expect(uploaded.status).toBe(201);
    const fileId = ((await uploaded.json()) as { processedFiles: { id: string }[] }).processedFiles[0]!.id;

    const { cookie, csrf } = await signIn();
    const list = await getPage(cookie, "/storage");
    expect(list.text).toMatch(new RegExp(`>${bucketId}</a></td><td>1</td>`));
    const bucket = await getPage(cookie, `/storage/${bucketId}`);
    expect(bucket.status).toBe(200);
    expect(bucket.text).toContain("pixel.png");
    expect(bucket.text).toContain(`>${user.email}</a>`);
    // The preview is a short-lived presigned URL through the transformer, allowed by the page's img-src only.
    const preview = /<img src="([^"]+)"/.exec(bucket.text)![1]!.replace(/&amp;/g, "&");
    expect(preview).toContain(`/files/${fileId}/presignedurl/contents`);
    expect(new URL(preview).searchParams.get("w")).toBe("160");
    expect(bucket.response.headers.get("content-security-policy")).toContain(`img-src ${ORIGIN}`);
    expect((await svc.request("GET", preview)).status).toBe(200);

    const settings = {
      csrf,
      minUploadFileSize: "1",
      maxUploadFileSize: "2000000",
      allowedMimeTypes: "image/*, application/pdf",
      cacheControl: "max-age=60",
      presignedUrlsEnabled: "yes",
      downloadExpiration: "120",
      "rule-upload": "authenticated",
      "rule-read": "public",
      "rule-update": "owner",
      "rule-delete": "editor, admin",
    };
    expect((await postForm(`/storage/${bucketId}/settings`, settings, cookie)).status).toBe(303);
    const api = await svc.request("GET", `${STORAGE}/buckets/${bucketId}`, {
      headers: { "x-hasura-admin-secret": SECRET },
    });
    expect(await api.json()).toMatchObject({
      maxUploadFileSize: 2_000_000,
      allowedMimeTypes: ["image/*", "application/pdf"],
      rules: { read: "public", delete: ["editor", "admin"] },
    });
    const invalid = await postForm(
      `/storage/${bucketId}/settings`,
      { ...settings, minUploadFileSize: "9000000" },
      cookie,
    );
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain("minUploadFileSize must not exceed maxUploadFileSize");

    expect((await postForm(`/storage/files/${fileId}/delete`, { csrf }, cookie)).status).toBe(403);
    expect((await postForm(`/storage/files/${fileId}/delete`, { csrf, confirm: "yes" }, cookie)).status).toBe(
      303,
    );
    expect(
      (await svc.request("GET", `${STORAGE}/files/${fileId}`, { token: session.accessToken })).status,
    ).toBe(404);
    expect(await auditTypesOf(user.id)).toContain("admin.storage.file-delete");
  });
});
