// The example app of examples/supabase-ssr (issue 43, "Done means"): a server-rendered app written for Supabase —
// @supabase/ssr keeping supabase-js's session in cookies — run as its README says, pointed at `wrangler dev`'s face
// with nothing changed but the URL and key. A person signs up, confirms by the mailed link (GoTrue's `/verify`,
// back to the app under PKCE with `?code=`), sees their account, refreshes, turns on TOTP, uploads a picture that
// comes back resized through a signed URL, reads their notes through the forwarded data API, signs out and signs in
// again with the second step.
// Threats covered: a cross-site form post to the app (refused: login CSRF), a session that outlives the sign-out
// (its refresh token must stop working at the service), a second factor skipped (the home page needs aal2).

import { serve } from "@hono/node-server";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { imageSize } from "image-size";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error: the example is plain JavaScript, run as its README says
import { createApp } from "../../examples/supabase-ssr/src/app.js";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { latestMail, PASSWORD, serverUrl, uniqueEmail } from "./client";

const keys = inject("supabaseKeys");
const appUrl = `http://127.0.0.1:${inject("appPort")}`;
const BUCKET = `pictures-${crypto.randomUUID().slice(0, 8)}`;
const storage = `${serverUrl}/supabase/storage/v1`;

/** A browser: one cookie jar, redirects followed by hand (each hop checked), the app's own Origin on its forms. */
class Browser {
  cookies = new Map<string, string>();

  async open(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (new URL(url).origin === appUrl && this.cookies.size) {
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    if (new URL(url).origin === appUrl) {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const [name, ...value] = pair!.split("=");
        if (/max-age=0/i.test(line) || value.join("=") === "") this.cookies.delete(name!);
        else this.cookies.set(name!, value.join("="));
      }
    }
    return response;
  }

  /** Opens `url` and follows its redirects to the page they end on. */
  async page(url: string, init?: RequestInit): Promise<{ url: string; status: number; html: string }> {
    let response = await this.open(url, init);
    let at = url;
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      if (hops > 5) throw new Error(`too many redirects from ${url}`);
      at = new URL(response.headers.get("location")!, at).toString();
      response = await this.open(at);
    }
    return { url: at, status: response.status, html: await response.text() };
  }

  post(path: string, body: FormData | Record<string, string>) {
    const form = body instanceof FormData ? body : new URLSearchParams(body);
    return this.page(`${appUrl}${path}`, { method: "POST", body: form, headers: { origin: appUrl } });
  }
}

/** The session @supabase/ssr keeps in the browser's cookies (`sb-…-auth-token`, base64url JSON, maybe in chunks). */
function sessionIn(cookies: Map<string, string>): { access_token: string; refresh_token: string } {
  const chunks = [...cookies]
    .filter(([name]) => /-auth-token(\.\d+)?$/.test(name))
    .sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(([, value]) => decodeURIComponent(value));
  const joined = chunks.join("");
  return JSON.parse(Buffer.from(joined.replace(/^base64-/, ""), "base64url").toString("utf8"));
}

const textOf = (html: string, id: string) => new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];

/** A 400×300 PNG, the picture the person uploads. */
async function picture(): Promise<Blob> {
  const { encode } = await import("fast-png");
  const [width, height] = [400, 300];
  const data = new Uint8Array(width * height * 3).fill(200);
  return new Blob([encode({ width, height, data, channels: 3, depth: 8 })], { type: "image/png" });
}

describe("examples/supabase-ssr against wrangler dev", () => {
  let server: ReturnType<typeof serve>;

  beforeAll(async () => {
    const settings = {
      supabaseUrl: `${serverUrl}/supabase`,
      supabaseKey: keys.publishable,
      appUrl,
      bucket: BUCKET,
      table: "notes",
    };
    server = serve({
      fetch: createApp(settings).fetch,
      port: Number(new URL(appUrl).port),
      hostname: "127.0.0.1",
    });
    // The operator's part of the README: the bucket, made with the secret key, and its rules (own files).
    const admin = {
      apikey: keys.secret,
      authorization: `Bearer ${keys.secret}`,
      "content-type": "application/json",
    };
    const made = await fetch(`${storage}/bucket`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ id: BUCKET, name: BUCKET, public: false }),
    });
    expect(made.status).toBe(200);
    const rules = await fetch(`${serverUrl}/storage/v1/buckets/${BUCKET}`, {
      method: "PATCH",
      headers: { "x-hasura-admin-secret": inject("adminSecret"), "content-type": "application/json" },
      body: JSON.stringify({
        rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" },
      }),
    });
    expect(rules.status).toBe(200);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("signs up, confirms, signs in, refreshes, enrolls TOTP, uploads and resizes a picture, reads a row", async () => {
    const person = new Browser();
    const email = uniqueEmail("ssr-example");
    const signedUp = await person.post("/signup", { email, password: PASSWORD });
    expect(signedUp.html).toContain("Check your mail");

    // The mailed link is GoTrue's, to the face; it comes back to the app with a code the app exchanges (PKCE, whose
    // verifier @supabase/ssr keeps in a cookie of this browser).
    const link = /(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec((await latestMail(email)).text)![1]!;
    const landed = await person.page(link);
    expect(decodeURIComponent(landed.url)).toBe(`${appUrl}/`);
    expect(textOf(landed.html, "email")).toBe(email);
    expect(textOf(landed.html, "aal")).toBe("aal1");

    // Threat: login CSRF. A form posted from another site is refused before supabase-js is called.
    const forged = await person.open(`${appUrl}/signout`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
    });
    expect(forged.status).toBe(403);

    const refreshed = await person.post("/refresh", {});
    expect(refreshed.html).toContain("Session refreshed");

    // Notes, through the forwarded data API: the project's row for this user (its fake answers what RLS would let
    // `auth.uid()` see), read with the token the project's own secret signs.
    expect(textOf(refreshed.html, "notes-error")).toBeUndefined();
    const userId = JSON.parse(
      Buffer.from(sessionIn(person.cookies).access_token.split(".")[1]!, "base64url").toString("utf8"),
    ).sub as string;
    expect(refreshed.html).toContain(`<li>a note of ${userId}</li>`);

    // A picture, uploaded into the person's folder and shown 120 pixels wide through a signed URL.
    const form = new FormData();
    form.set("picture", new File([await picture()], "holiday.png", { type: "image/png" }));
    const uploaded = await person.post("/pictures", form);
    expect(uploaded.html).toContain("Uploaded");
    const src = /<div id="pictures"><img src="([^"]+)"/.exec(uploaded.html)?.[1]?.replaceAll("&amp;", "&");
    expect(src).toBeDefined();
    const shown = await fetch(src!);
    expect(shown.status).toBe(200);
    expect(imageSize(new Uint8Array(await shown.arrayBuffer())).width).toBe(120);

    // TOTP: the page shows the key, a code turns it on, and the session is aal2.
    const enrolling = await person.post("/totp/enroll", {});
    const secret = textOf(enrolling.html, "secret")!;
    const factorId = /name="factorId" value="([^"]+)"/.exec(enrolling.html)![1]!;
    const step = totpStep(Date.now());
    const on = await person.post("/totp/confirm", {
      factorId,
      code: totpCode(decodeBase32IgnorePadding(secret), step),
    });
    expect(on.html).toContain("Two-step sign-in is on");
    expect(textOf(on.html, "aal")).toBe("aal2");
    expect(on.html).toContain('id="totp-on"');

    // Threat: a session kept after sign-out. The refresh token the cookie held stops working at the service.
    const { refresh_token } = sessionIn(person.cookies);
    await person.post("/signout", {});
    expect([...person.cookies.keys()].filter((name) => name.includes("auth-token"))).toEqual([]);
    const replayed = await fetch(`${serverUrl}/supabase/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: { apikey: keys.publishable, "content-type": "application/json" },
      body: JSON.stringify({ refresh_token }),
    });
    expect(replayed.status).toBe(400);

    // Signing in again asks the second step before the account shows (the code of the next step: a step's code is
    // taken once).
    const password = await person.post("/signin", { email, password: PASSWORD });
    expect(password.url).toBe(`${appUrl}/mfa`);
    const next = await person.post("/mfa", { code: totpCode(decodeBase32IgnorePadding(secret), step + 1n) });
    expect(next.url).toBe(`${appUrl}/`);
    expect(textOf(next.html, "aal")).toBe("aal2");
  });
});
