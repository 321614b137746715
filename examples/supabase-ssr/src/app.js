import { Hono } from "hono";
import { checkMailPage, enrollPage, homePage, STYLE, secondFactorPage, signedOutPage } from "./pages.js";
import { supabaseFor } from "./supabase.js";

/**
 * A server-rendered app written for Supabase, unchanged but for its URL and key: it signs up (the mailed link comes
 * back to /auth/callback), signs in, steps up with TOTP, refreshes, uploads a picture and shows it resized, and reads
 * its notes through the data API. `settings`: supabaseUrl, supabaseKey, appUrl, bucket, table.
 */
export function createApp(settings) {
  const app = new Hono();
  const supabaseUrl = new URL(settings.supabaseUrl);

  app.use(async (c, next) => {
    // Forms post cookies: a post from another site is refused (login CSRF, cross-site uploads).
    if (c.req.method === "POST" && c.req.header("Origin") !== new URL(settings.appUrl).origin) {
      return c.text("Cross-site form refused", 403);
    }
    await next();
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; style-src 'self'; img-src 'self' data: ${supabaseUrl.origin}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    c.header("Cache-Control", "no-store");
  });

  app.get("/style.css", (c) => c.body(STYLE, 200, { "Content-Type": "text/css" }));

  app.get("/", async (c) => {
    const supabase = supabaseFor(c, settings);
    const { data } = await supabase.auth.getUser();
    if (!data.user) return c.html(signedOutPage(c.req.query("message")));
    const { data: level } = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
    // A user with an authenticator signs in at aal1 and steps up before anything else.
    if (level?.nextLevel === "aal2" && level.currentLevel !== "aal2") return c.redirect("/mfa", 303);
    const { data: factors } = await supabase.auth.mfa.listFactors();
    const notes = await supabase.from(settings.table).select("title").order("title");
    return c.html(
      homePage({
        user: data.user,
        aal: level?.currentLevel ?? "aal1",
        factors: factors?.all ?? [],
        notes: notes.data ?? [],
        notesError: notes.error?.message,
        pictures: await pictures(supabase, settings.bucket, data.user.id),
        message: c.req.query("message"),
      }),
    );
  });

  app.post("/signup", async (c) => {
    const form = await c.req.parseBody();
    const { error } = await supabaseFor(c, settings).auth.signUp({
      email: String(form.email),
      password: String(form.password),
      options: { emailRedirectTo: `${settings.appUrl}/auth/callback` },
    });
    if (error) return c.html(signedOutPage(error.message), 400);
    return c.html(checkMailPage(String(form.email)));
  });

  // The mailed link lands here: under PKCE (@supabase/ssr's flow) with `?code=`, or, for an app that puts
  // `token_hash` in its own mail template, with `?token_hash=…&type=…`.
  app.get("/auth/callback", async (c) => {
    const supabase = supabaseFor(c, settings);
    const { code, token_hash: tokenHash, type } = c.req.query();
    const { error } = code
      ? await supabase.auth.exchangeCodeForSession(code)
      : await supabase.auth.verifyOtp({ token_hash: tokenHash ?? "", type: type ?? "email" });
    if (error) return c.redirect(`/?message=${encodeURIComponent(error.message)}`, 303);
    return c.redirect("/", 303);
  });

  app.post("/signin", async (c) => {
    const form = await c.req.parseBody();
    const { error } = await supabaseFor(c, settings).auth.signInWithPassword({
      email: String(form.email),
      password: String(form.password),
    });
    if (error) return c.html(signedOutPage(error.message), 400);
    return c.redirect("/", 303);
  });

  app.get("/mfa", (c) => c.html(secondFactorPage()));
  app.post("/mfa", async (c) => {
    const supabase = supabaseFor(c, settings);
    const { data: factors } = await supabase.auth.mfa.listFactors();
    const totp = factors?.totp?.[0];
    if (!totp) return c.redirect("/", 303);
    const { code } = await c.req.parseBody();
    const { error } = await supabase.auth.mfa.challengeAndVerify({ factorId: totp.id, code: String(code) });
    if (error) return c.html(secondFactorPage(error.message), 400);
    return c.redirect("/", 303);
  });

  app.post("/totp/enroll", async (c) => {
    const { data, error } = await supabaseFor(c, settings).auth.mfa.enroll({ factorType: "totp" });
    if (error) return c.redirect(`/?message=${encodeURIComponent(error.message)}`, 303);
    return c.html(enrollPage({ factorId: data.id, qrCode: data.totp.qr_code, secret: data.totp.secret }));
  });
  app.post("/totp/confirm", async (c) => {
    const form = await c.req.parseBody();
    const factorId = String(form.factorId);
    const { error } = await supabaseFor(c, settings).auth.mfa.challengeAndVerify({
      factorId,
      code: String(form.code),
    });
    if (error) return c.redirect(`/?message=${encodeURIComponent(error.message)}`, 303);
    return c.redirect("/?message=Two-step+sign-in+is+on", 303);
  });

  app.post("/refresh", async (c) => {
    const { error } = await supabaseFor(c, settings).auth.refreshSession();
    return c.redirect(`/?message=${encodeURIComponent(error ? error.message : "Session refreshed")}`, 303);
  });

  app.post("/pictures", async (c) => {
    const supabase = supabaseFor(c, settings);
    const { data } = await supabase.auth.getUser();
    if (!data.user) return c.redirect("/", 303);
    const { picture } = await c.req.parseBody();
    if (!(picture instanceof File)) return c.redirect("/?message=Choose+a+picture", 303);
    // The usual Supabase policy "a user writes under a folder named by their id", as the bucket's rule.
    const path = `${data.user.id}/${crypto.randomUUID()}-${picture.name.replace(/[^\w.-]/g, "_")}`;
    const { error } = await supabase.storage
      .from(settings.bucket)
      .upload(path, picture, { contentType: picture.type || "application/octet-stream" });
    return c.redirect(`/?message=${encodeURIComponent(error ? error.message : "Uploaded")}`, 303);
  });

  app.post("/signout", async (c) => {
    await supabaseFor(c, settings).auth.signOut();
    return c.redirect("/", 303);
  });

  return app;
}

/** The user's pictures, each as a signed URL of a 120-pixel-wide rendition. */
async function pictures(supabase, bucket, userId) {
  const { data: files } = await supabase.storage
    .from(bucket)
    .list(userId, { sortBy: { column: "name", order: "asc" } });
  const shown = [];
  for (const file of files ?? []) {
    const { data } = await supabase.storage
      .from(bucket)
      .createSignedUrl(`${userId}/${file.name}`, 600, { transform: { width: 120 } });
    if (data) shown.push({ name: file.name, url: data.signedUrl });
  }
  return shown;
}
