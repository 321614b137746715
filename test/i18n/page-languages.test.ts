// Every built-in page and mail speaks the person's language (contract §13): `ui_locales` first, then the signed-in
// user's `locale`, then the browser's `Accept-Language`, among AUTH_UI_LOCALES; mails in the user's `locale`.
// Threats: a page that knows the user but speaks the browser's language (a shared or kiosk browser shows a Japanese
// user's consent and sign-out questions in a language they may not read, and they click through a question they did
// not understand); a deployment that offers only some languages serving another one anyway; an account made on a
// Japanese page whose mails (the confirmation link) arrive in English; a user's locale the deployment did not allow
// (AUTH_LOCALE_ALLOWED_LOCALES, Nhost's meaning) set behind its back by the page.
import { describe, expect, it } from "vitest";
import { mailbox, PASSWORD, signUp, uniqueEmail, verifyPath } from "../helpers";
import { Browser, ORIGIN } from "../oauth2/page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "../oauth2/support";

/** Users may have these locales (AUTH_LOCALE_ALLOWED_LOCALES keeps its Nhost meaning: what a user's locale may be). */
const LOCALES = { AUTH_LOCALE_ALLOWED_LOCALES: "en,es,pt,ja" };

/** The built-in page of a new authorization request, fetched with `headers` (a browser's languages) and its cookies. */
async function pageOf(
  browser: Browser,
  params: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  const client = await newClient(browser.svc);
  const response = await authorize(browser.svc, client, params);
  const requestId = await requestIdOf(response);
  const url = location(response)
    .toString()
    .replace(/^.*\/auth\/v1/, "");
  const page = await browser.svc.request("GET", url, { headers: { cookie: browser.cookie, ...headers } });
  return { requestId, page, html: await page.text() };
}

/** A browser signed in to the page as `email`, through the sign-in form of a first request. */
async function signedInBrowser(browser: Browser, email: string) {
  const { requestId } = await pageOf(browser);
  const response = await browser.post("/oauth2/interaction/sign-in", {
    request_id: requestId,
    email,
    password: PASSWORD,
  });
  expect(response.status).toBe(303);
  expect(browser.signedIn).toBe(true);
  return browser;
}

describe("the page's language", () => {
  it("speaks the browser's language: Japanese, Spanish, Portuguese", async () => {
    const browser = new Browser(provider());
    const ja = await pageOf(browser, {}, { "accept-language": "ja-JP, ja;q=0.9, en;q=0.5" });
    expect(ja.page.status).toBe(200);
    expect(ja.html).toContain('<html lang="ja">');
    expect(ja.html).toContain("パスワードをお忘れですか？");
    const es = await pageOf(browser, {}, { "accept-language": "es-419, en;q=0.5" });
    expect(es.html).toContain('<html lang="es">');
    expect(es.html).toContain("¿Olvidaste tu contraseña?");
    const pt = await pageOf(browser, {}, { "accept-language": "pt-BR" });
    expect(pt.html).toContain('<html lang="pt">');
    expect(pt.html).toContain("Esqueceu sua senha?");
  });

  it("ui_locales of the request wins over the browser's language", async () => {
    const { html } = await pageOf(
      new Browser(provider()),
      { ui_locales: "pt-BR ja" },
      { "accept-language": "ja" },
    );
    expect(html).toContain('<html lang="pt">');
    expect(html).toContain("Entrar");
    expect(html).not.toContain("パスワード");
  });

  it("offers only AUTH_UI_LOCALES: a Japanese browser gets English, or German when it also reads German", async () => {
    const browser = new Browser(provider({ AUTH_UI_LOCALES: "en,de" }));
    const english = await pageOf(browser, {}, { "accept-language": "ja" });
    expect(english.html).toContain('<html lang="en">');
    expect(english.html).toContain("Forgot your password?");
    const german = await pageOf(browser, {}, { "accept-language": "ja, de;q=0.5" });
    expect(german.html).toContain('<html lang="de">');
    // Nor does ui_locales reach past the offer.
    const asked = await pageOf(browser, { ui_locales: "ja" }, { "accept-language": "en" });
    expect(asked.html).toContain('<html lang="en">');
  });

  it("a language we do not ship falls back to the first offered one", async () => {
    const { html } = await pageOf(new Browser(provider()), {}, { "accept-language": "ko, it;q=0.5" });
    expect(html).toContain('<html lang="en">');
  });
});

describe("pages that know the user speak the user's language", () => {
  it("consent, re-authentication and sign-out in the user's locale (es) over the browser's (de); ui_locales first", async () => {
    const svc = provider(LOCALES);
    const { user } = await signUp(svc, uniqueEmail("lang-es"), { locale: "es" });
    expect(user.locale).toBe("es");
    const browser = await signedInBrowser(new Browser(svc), user.email);
    const german = { "accept-language": "de" };

    const consent = await pageOf(browser, {}, german);
    expect(consent.page.status).toBe(200);
    expect(consent.html).toContain('<html lang="es">');
    expect(consent.html).toContain("quiere acceder a tu cuenta");
    expect(consent.html).toContain("Ver tu dirección de correo electrónico");

    // The request's own ui_locales still comes first (OIDC Core §3.1.2.1).
    const asked = await pageOf(browser, { ui_locales: "ja" }, german);
    expect(asked.html).toContain('<html lang="ja">');
    expect(asked.html).toContain("あなたのアカウントへのアクセスを求めています。");

    const reauth = await pageOf(browser, { prompt: "login" }, german);
    expect(reauth.html).toContain('<html lang="es">');
    expect(reauth.html).toContain("Confirma que eres tú");

    const signOut = await svc.request("GET", "/oauth2/logout", {
      headers: { cookie: browser.cookie, ...german },
    });
    const question = await signOut.text();
    expect(signOut.status).toBe(200);
    expect(question).toContain('<html lang="es">');
    expect(question).toContain("¿Cerrar sesión en localhost:8787?");
  });

  it("a reset link lands on the new-password form in the user's locale (pt), not the browser's", async () => {
    const svc = provider(LOCALES);
    const email = uniqueEmail("lang-pt-reset");
    await signUp(svc, email, { locale: "pt" });
    const browser = new Browser(svc);
    const { requestId } = await pageOf(browser);
    const sent = await browser.post("/oauth2/interaction/reset", { request_id: requestId, email });
    expect(sent.status).toBe(200);
    const [mail] = await mailbox(svc, email);
    expect(mail?.subject).toBe("Redefina sua senha");
    const landing = location(await svc.request("GET", verifyPath(mail!)));
    // The browser landing here says nothing of Portuguese: the signed-in user does.
    const landed = await browser.get(landing.toString());
    const form = await landed.text();
    expect(landed.status).toBe(200);
    expect(form).toContain('<html lang="pt">');
    expect(form).toContain("Escolha uma nova senha");
    const tooShort = await browser.post("/oauth2/interaction/new-password", {
      request_id: requestId,
      password: "short",
    });
    expect(tooShort.status).toBe(400);
    expect(await tooShort.text()).toContain("A senha é curta demais");
  });

  it("a user's locale the deployment does not offer on pages is passed over for the browser's", async () => {
    const svc = provider({ ...LOCALES, AUTH_UI_LOCALES: "en,de" });
    const { user } = await signUp(svc, uniqueEmail("lang-ja-off"), { locale: "ja" });
    const browser = await signedInBrowser(new Browser(svc), user.email);
    const consent = await pageOf(browser, {}, { "accept-language": "de" });
    expect(consent.html).toContain('<html lang="de">');
  });
});

describe("mails in the user's language", () => {
  it("a password reset for a user whose locale is pt arrives in Portuguese", async () => {
    const svc = provider(LOCALES);
    const email = uniqueEmail("lang-pt");
    await signUp(svc, email, { locale: "pt" });
    expect(await (await svc.post("/user/password/reset", { email })).json()).toBe("OK");
    const [mail] = await mailbox(svc, email);
    expect(mail?.subject).toBe("Redefina sua senha");
    expect(mail?.text).toContain("Use este link para redefinir sua senha:");
    expect(mail?.html).toMatch(/<a href="http[^"]+\/verify\?[^"]+">Redefinir sua senha<\/a>/);
  });

  it("an account made on a Japanese page gets Japanese mails, when Japanese is an allowed locale", async () => {
    const svc = provider({ ...LOCALES, AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true" });
    const browser = new Browser(svc);
    const { requestId } = await pageOf(browser, {}, { "accept-language": "ja" });
    const email = uniqueEmail("lang-ja-page");
    const created = await browser.post(
      "/oauth2/interaction/sign-up",
      { request_id: requestId, email, password: PASSWORD },
      { ...ORIGIN, "accept-language": "ja" },
    );
    expect(created.status).toBe(200);
    expect(await created.text()).toContain(`アドレスを確認するためのリンクを ${email} にお送りしました。`);
    const [mail] = await mailbox(svc, email);
    expect(mail?.subject).toBe("メールアドレスの確認");
    expect(mail?.text).toContain("このメールアドレスでアカウントが作成されました。");
  });

  it("keeps AUTH_LOCALE_ALLOWED_LOCALES: a Japanese page's account gets the default locale when ja is not allowed", async () => {
    const svc = provider({
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true",
      AUTH_LOCALE_ALLOWED_LOCALES: "en,de",
    });
    const browser = new Browser(svc);
    const { requestId } = await pageOf(browser, {}, { "accept-language": "ja" });
    const email = uniqueEmail("lang-ja-default");
    const created = await browser.post(
      "/oauth2/interaction/sign-up",
      { request_id: requestId, email, password: PASSWORD },
      { ...ORIGIN, "accept-language": "ja" },
    );
    expect(created.status).toBe(200);
    const [mail] = await mailbox(svc, email);
    expect(mail?.subject).toBe("Verify your email");
  });
});
