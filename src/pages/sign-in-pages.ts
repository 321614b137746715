import { type Ctx, paths, returnTarget, viewHref } from "../browser/page-paths";
import { render, widgetFor } from "../browser/page-response";
import { catalogueFor, pageText } from "../browser/page-text";
import { providerName } from "../browser/provider-names";
import { signInForm } from "../browser/render";
import { googleOneTap } from "../fedcm";
import type { InteractionRequest } from "../oauth2";
import { hostedIntro } from "./hosted-text";
import { passkeyScript } from "./passkey-script";
import { resetForm, signUpForm } from "./render-account";

/** The views a person signs in or gets an account from: sign-in, sign-up and reset, as the deployment has them. */

/** The magic-link form may create the account while sign-ups are on, so `signup` guards it too (checks.ts). */
const linkWidget = (c: Ctx) =>
  widgetFor(c, "passwordless") ??
  (c.var.config.signUp.disabled ? undefined : widgetFor(c, "signup", "passwordless"));

/** The sign-in form, with sign-up, reset, providers, passkeys and magic links as the deployment has them. */
export function signInPage(
  c: Ctx,
  request: InteractionRequest,
  clientName: string,
  options: {
    status?: 200 | 400 | 401 | 429 | 503;
    email?: string;
    error?: string;
    resend?: boolean;
    /** Sentences said before the form instead of "to continue to …" (an invitation's). */
    intro?: string[];
    /** The known user's `locale` (a re-authentication signing in again): the language after `ui_locales`. */
    userLocale?: string;
  } = {},
) {
  const { config } = c.var;
  const t = pageText(c, request.uiLocales, options.userLocale);
  const passkeys = config.webauthn.enabled;
  // Google's One Tap through the browser's FedCM prompt (docs/fedcm.md): its session comes in as a passkey's does.
  const oneTap = googleOneTap(config);
  const scripts = [
    ...(passkeys ? [passkeyScript(config.urls.authPath)] : []),
    ...(oneTap ? [oneTap.script] : []),
  ];
  const widgets = { signin: widgetFor(c, "signin"), passwordless: linkWidget(c) };
  return render(
    c,
    options.status ?? 200,
    t.signInTitle,
    signInForm({
      t,
      action: paths(c).signIn,
      requestId: request.id,
      clientName,
      // An app's request (the hosted pages) names the app or the account center in its own words.
      intro: options.intro ?? hostedIntro(c, request, clientName, "sign-in", options.userLocale),
      email: options.email ?? request.loginHint,
      error: options.error,
      resendAction: options.resend ? paths(c).resendVerification : undefined,
      signUpHref: config.signUp.disabled ? undefined : viewHref(c, request.id, "sign-up"),
      resetHref: viewHref(c, request.id, "reset"),
      providerAction: paths(c).provider,
      providers: Object.keys(config.providers.enabled).map((id) => ({
        id,
        name: providerName(id, config.providers.enabled),
      })),
      emailLinkAction: config.passwordless.emailLink ? paths(c).emailLink : undefined,
      passkeySessionAction: passkeys || oneTap ? paths(c).session : undefined,
      widgets,
    }),
    {
      t,
      redirectUri: returnTarget(request),
      widget: Boolean(widgets.signin || widgets.passwordless),
      providerOrigins: [
        ...new Set(
          Object.values(config.providers.enabled).map(
            (settings) => new URL(settings.authorizationUrl).origin,
          ),
        ),
      ],
      ...(scripts.length ? { script: scripts.join("\n") } : {}),
      ...(oneTap ? { connectOrigins: [oneTap.origin] } : {}),
    },
  );
}

/** The sign-up view (when sign-up is allowed) and the reset view. */
export function accountPage(
  c: Ctx,
  request: InteractionRequest,
  clientName: string,
  view: "sign-up" | "reset",
  options: {
    status?: 200 | 400 | 401 | 403 | 409 | 429 | 503;
    email?: string;
    displayName?: string;
    error?: string;
  } = {},
) {
  const { config } = c.var;
  const t = pageText(c, request.uiLocales);
  const signInHref = viewHref(c, request.id);
  // Security keys on: the autofill sign-in on both views, the passkey-only sign-up on the sign-up view.
  const passkeys = config.webauthn.enabled
    ? { words: catalogueFor(c, request.uiLocales).passkeys, sessionAction: paths(c).session }
    : undefined;
  const script = passkeys ? { script: passkeyScript(config.urls.authPath) } : {};
  const status = (options.status === 409 ? 400 : (options.status ?? 200)) as
    | 200
    | 400
    | 401
    | 403
    | 429
    | 503;
  if (view === "sign-up") {
    const slot = widgetFor(c, "signup");
    return render(
      c,
      status,
      t.signUpTitle,
      signUpForm({
        intro: hostedIntro(c, request, clientName, "sign-up"),
        t,
        action: paths(c).signUp,
        requestId: request.id,
        clientName,
        minLength: config.password.minLength,
        email: options.email,
        displayName: options.displayName,
        error: options.error,
        signInHref,
        widget: slot,
        passkeys,
      }),
      { t, redirectUri: returnTarget(request), widget: Boolean(slot), ...script },
    );
  }
  const slot = widgetFor(c, "password-reset");
  return render(
    c,
    status,
    t.resetTitle,
    resetForm({
      t,
      action: paths(c).reset,
      requestId: request.id,
      email: options.email,
      error: options.error,
      signInHref,
      widget: slot,
      passkeys,
    }),
    { t, widget: Boolean(slot), ...script },
  );
}
