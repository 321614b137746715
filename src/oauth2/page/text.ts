import type { Context } from "hono";

/**
 * The words of the built-in sign-in, consent and device pages in English, French and German, like the mail
 * templates. The language is the first of the request's `ui_locales` (OIDC Core §3.1.2.1) that we have, else the
 * browser's `Accept-Language` in its order of preference, else English.
 */
const en = {
  lang: "en",
  signInTitle: "Sign in",
  toContinueTo: "to continue to",
  email: "Email",
  password: "Password",
  signIn: "Sign in",
  forgotPassword: "Forgot your password?",
  noAccount: "No account yet?",
  createAccount: "Create an account",
  orContinueWith: "Or continue with",
  continueWith: (provider: string) => `Continue with ${provider}`,
  passkey: "Sign in with a passkey",
  passkeyProblem: "The passkey sign-in did not work. Try again or use your password.",
  emailLinkLabel: "Or get a sign-in link by email",
  emailMeALink: "Email me a link",
  checkEmail: "Check your email",
  linkSentLead: (email: string) => `If ${email} can sign in here, a sign-in link is on its way to it.`,
  linkSentHint: "Open the link in this browser within the next hour to continue.",
  signUpTitle: "Create an account",
  displayName: "Your name (optional)",
  newPasswordHint: (min: number) => `At least ${min} characters.`,
  signUp: "Create account",
  haveAccount: "Already have an account?",
  verifySentLead: (email: string) => `We sent a link to ${email} to confirm the address.`,
  verifySentHint: "Open it in this browser: you will come back here, signed in.",
  resetTitle: "Reset your password",
  resetLead: "Enter your account's email address and we will send you a link to choose a new password.",
  sendResetLink: "Send the link",
  resetSentLead: (email: string) =>
    `If ${email} has an account here, a link to reset its password is on its way.`,
  backToSignIn: "Back to sign-in",
  newPasswordTitle: "Choose a new password",
  newPasswordLead: "Your email address is confirmed. Choose the password you will sign in with from now on.",
  newPassword: "New password",
  savePassword: "Save and continue",
  resendVerification: "Send the confirmation mail again",
  mfaTitle: "Two-step verification",
  mfaLead: "Enter the code from your authenticator app, or a recovery code.",
  code: "Code",
  verify: "Verify",
  wantsAccess: "wants to access your account",
  wantsDeviceAccess: "wants to access your account from a device showing the code",
  deviceWarning:
    "Only allow this if you started it on your own device and it shows this code. Nobody should ever ask you to enter a code for them.",
  willBeAbleTo: "It will be able to:",
  asksNothing: "It asks for no data beyond knowing that you allowed it.",
  deny: "Deny",
  allow: "Allow",
  signedInAs: "Signed in as",
  useAnotherAccount: "Use another account",
  publishedBy: "Published by",
  loopbackWarning: "This app runs on your own computer. Allow it only if you just started it yourself.",
  unreviewedNote: "This app registered itself; its name was not checked.",
  allowTitle: (client: string) => `Allow ${client}?`,
  deviceTitle: "Connect a device",
  deviceLead: "Enter the code shown on your device or in your terminal.",
  continue: "Continue",
  deviceConnected: "Device connected",
  deviceConnectedLead: "You can close this page and go back to your device.",
  deviceDenied: "Request denied",
  deviceDeniedLead: "The device was not given access. You can close this page.",
  problemTitle: "This sign-in link does not work",
  problemHint: "Go back to the app and start again.",
  scopes: {
    openid: "Know who you are (your account id)",
    profile: "See your name, picture and language",
    email: "See your email address",
    phone: "See your phone number",
    offline_access: "Stay connected when you are not using it",
    graphql: "Read and change your data through the GraphQL API, as you",
  } as Record<string, string>,
  errors: {
    wrongPassword: "Wrong email or password.",
    unverified: "Confirm your email address first: follow the link in the mail we sent you.",
    disabled: "This account is disabled. Contact the app's support.",
    wrongCode: "That code is not right.",
    expiredLink: "This sign-in link or code is invalid, used or expired. Start again.",
    failed: "Sign-in failed.",
    tooManyAttempts: (seconds: number) => `Too many attempts. Try again in ${seconds} seconds.`,
    tooManyCodes: (seconds: number) => `Too many wrong codes. Try again in ${seconds} seconds.`,
    tooManyEmails: (seconds: number) => `Too many emails. Try again in ${seconds} seconds.`,
    enterEmailPassword: "Enter your email and password.",
    enterEmail: "Enter a valid email address.",
    linksOff: "Sign-in links are switched off here.",
    signUpOff: "New accounts cannot be created here.",
    emailInUse: "An account with this email address exists already. Sign in instead, or reset its password.",
    passwordTooShort: (min: number) => `The password is too short: at least ${min} characters.`,
    passwordBreached: "This password appeared in a known data breach. Choose another one.",
    emailNotAllowed: "This email address cannot be used here.",
    turnstile: "Confirm that you are a person (the check below), then try again.",
    turnstileUnavailable: "The check that you are a person cannot be done right now. Try again in a moment.",
    otherBrowser: "This link was asked for in another browser. Ask for a new one here, in this browser.",
    linkExpired: "This sign-in link is invalid, used or expired.",
    resetExpired: "This page is no longer valid. Ask for a new reset link.",
    providerFailed: "Signing in with that provider did not work. Try again or use another way.",
    otherSite: "This form was sent from another site.",
    unknownRequest: "This sign-in request is unknown or has expired.",
    deviceCodeWrong: "That code is not right, or it has expired. Check the code on your device.",
  },
};

export type PageText = typeof en;

const fr: PageText = {
  lang: "fr",
  signInTitle: "Connexion",
  toContinueTo: "pour continuer vers",
  email: "E-mail",
  password: "Mot de passe",
  signIn: "Se connecter",
  forgotPassword: "Mot de passe oublié ?",
  noAccount: "Pas encore de compte ?",
  createAccount: "Créer un compte",
  orContinueWith: "Ou continuer avec",
  continueWith: (provider) => `Continuer avec ${provider}`,
  passkey: "Se connecter avec une clé d'accès",
  passkeyProblem: "La connexion par clé d'accès n'a pas abouti. Réessayez ou utilisez votre mot de passe.",
  emailLinkLabel: "Ou recevoir un lien de connexion par e-mail",
  emailMeALink: "M'envoyer un lien",
  checkEmail: "Consultez vos e-mails",
  linkSentLead: (email) => `Si ${email} peut se connecter ici, un lien de connexion lui a été envoyé.`,
  linkSentHint: "Ouvrez le lien dans ce navigateur dans l'heure qui vient pour continuer.",
  signUpTitle: "Créer un compte",
  displayName: "Votre nom (facultatif)",
  newPasswordHint: (min) => `Au moins ${min} caractères.`,
  signUp: "Créer le compte",
  haveAccount: "Vous avez déjà un compte ?",
  verifySentLead: (email) => `Nous avons envoyé un lien à ${email} pour confirmer l'adresse.`,
  verifySentHint: "Ouvrez-le dans ce navigateur : vous reviendrez ici, connecté.",
  resetTitle: "Réinitialiser le mot de passe",
  resetLead:
    "Saisissez l'adresse e-mail de votre compte : nous vous enverrons un lien pour choisir un nouveau mot de passe.",
  sendResetLink: "Envoyer le lien",
  resetSentLead: (email) => `Si ${email} a un compte ici, un lien de réinitialisation lui a été envoyé.`,
  backToSignIn: "Retour à la connexion",
  newPasswordTitle: "Choisissez un nouveau mot de passe",
  newPasswordLead:
    "Votre adresse e-mail est confirmée. Choisissez le mot de passe avec lequel vous vous connecterez désormais.",
  newPassword: "Nouveau mot de passe",
  savePassword: "Enregistrer et continuer",
  resendVerification: "Renvoyer l'e-mail de confirmation",
  mfaTitle: "Vérification en deux étapes",
  mfaLead: "Saisissez le code de votre application d'authentification, ou un code de secours.",
  code: "Code",
  verify: "Vérifier",
  wantsAccess: "souhaite accéder à votre compte",
  wantsDeviceAccess: "souhaite accéder à votre compte depuis un appareil qui affiche le code",
  deviceWarning:
    "N'autorisez que si vous l'avez lancé sur votre propre appareil et qu'il affiche ce code. Personne ne devrait vous demander de saisir un code pour lui.",
  willBeAbleTo: "Elle pourra :",
  asksNothing: "Elle ne demande aucune donnée, seulement de savoir que vous l'avez autorisée.",
  deny: "Refuser",
  allow: "Autoriser",
  signedInAs: "Connecté en tant que",
  useAnotherAccount: "Utiliser un autre compte",
  publishedBy: "Publiée par",
  loopbackWarning:
    "Cette application tourne sur votre ordinateur. Ne l'autorisez que si vous venez de la lancer vous-même.",
  unreviewedNote: "Cette application s'est enregistrée elle-même ; son nom n'a pas été vérifié.",
  allowTitle: (client) => `Autoriser ${client} ?`,
  deviceTitle: "Connecter un appareil",
  deviceLead: "Saisissez le code affiché sur votre appareil ou dans votre terminal.",
  continue: "Continuer",
  deviceConnected: "Appareil connecté",
  deviceConnectedLead: "Vous pouvez fermer cette page et revenir à votre appareil.",
  deviceDenied: "Demande refusée",
  deviceDeniedLead: "L'appareil n'a pas reçu l'accès. Vous pouvez fermer cette page.",
  problemTitle: "Ce lien de connexion ne fonctionne pas",
  problemHint: "Revenez à l'application et recommencez.",
  scopes: {
    openid: "Savoir qui vous êtes (l'identifiant de votre compte)",
    profile: "Voir votre nom, votre photo et votre langue",
    email: "Voir votre adresse e-mail",
    phone: "Voir votre numéro de téléphone",
    offline_access: "Rester connectée quand vous ne l'utilisez pas",
    graphql: "Lire et modifier vos données par l'API GraphQL, en votre nom",
  },
  errors: {
    wrongPassword: "E-mail ou mot de passe incorrect.",
    unverified:
      "Confirmez d'abord votre adresse e-mail : suivez le lien de l'e-mail que nous vous avons envoyé.",
    disabled: "Ce compte est désactivé. Contactez le support de l'application.",
    wrongCode: "Ce code n'est pas le bon.",
    expiredLink: "Ce lien ou ce code de connexion est invalide, déjà utilisé ou expiré. Recommencez.",
    failed: "La connexion a échoué.",
    tooManyAttempts: (seconds) => `Trop de tentatives. Réessayez dans ${seconds} secondes.`,
    tooManyCodes: (seconds) => `Trop de codes erronés. Réessayez dans ${seconds} secondes.`,
    tooManyEmails: (seconds) => `Trop d'e-mails. Réessayez dans ${seconds} secondes.`,
    enterEmailPassword: "Saisissez votre e-mail et votre mot de passe.",
    enterEmail: "Saisissez une adresse e-mail valide.",
    linksOff: "Les liens de connexion sont désactivés ici.",
    signUpOff: "Il n'est pas possible de créer un compte ici.",
    emailInUse:
      "Un compte existe déjà avec cette adresse. Connectez-vous, ou réinitialisez son mot de passe.",
    passwordTooShort: (min) => `Le mot de passe est trop court : au moins ${min} caractères.`,
    passwordBreached: "Ce mot de passe figure dans une fuite de données connue. Choisissez-en un autre.",
    emailNotAllowed: "Cette adresse e-mail ne peut pas être utilisée ici.",
    turnstile: "Confirmez que vous êtes une personne (la vérification ci-dessous), puis réessayez.",
    turnstileUnavailable: "La vérification est impossible pour le moment. Réessayez dans un instant.",
    otherBrowser:
      "Ce lien a été demandé dans un autre navigateur. Demandez-en un nouveau ici, dans ce navigateur.",
    linkExpired: "Ce lien de connexion est invalide, déjà utilisé ou expiré.",
    resetExpired: "Cette page n'est plus valable. Demandez un nouveau lien de réinitialisation.",
    providerFailed:
      "La connexion avec ce fournisseur n'a pas abouti. Réessayez ou choisissez un autre moyen.",
    otherSite: "Ce formulaire a été envoyé depuis un autre site.",
    unknownRequest: "Cette demande de connexion est inconnue ou a expiré.",
    deviceCodeWrong: "Ce code n'est pas le bon, ou il a expiré. Vérifiez le code sur votre appareil.",
  },
};

const de: PageText = {
  lang: "de",
  signInTitle: "Anmelden",
  toContinueTo: "um fortzufahren zu",
  email: "E-Mail",
  password: "Passwort",
  signIn: "Anmelden",
  forgotPassword: "Passwort vergessen?",
  noAccount: "Noch kein Konto?",
  createAccount: "Konto erstellen",
  orContinueWith: "Oder weiter mit",
  continueWith: (provider) => `Weiter mit ${provider}`,
  passkey: "Mit einem Passkey anmelden",
  passkeyProblem:
    "Die Anmeldung mit dem Passkey hat nicht geklappt. Versuchen Sie es erneut oder nutzen Sie Ihr Passwort.",
  emailLinkLabel: "Oder einen Anmeldelink per E-Mail erhalten",
  emailMeALink: "Link senden",
  checkEmail: "Sehen Sie in Ihr Postfach",
  linkSentLead: (email) => `Wenn ${email} sich hier anmelden kann, ist ein Anmeldelink unterwegs.`,
  linkSentHint: "Öffnen Sie den Link innerhalb einer Stunde in diesem Browser, um fortzufahren.",
  signUpTitle: "Konto erstellen",
  displayName: "Ihr Name (optional)",
  newPasswordHint: (min) => `Mindestens ${min} Zeichen.`,
  signUp: "Konto erstellen",
  haveAccount: "Sie haben schon ein Konto?",
  verifySentLead: (email) => `Wir haben einen Link an ${email} gesendet, um die Adresse zu bestätigen.`,
  verifySentHint: "Öffnen Sie ihn in diesem Browser: Sie kommen angemeldet hierher zurück.",
  resetTitle: "Passwort zurücksetzen",
  resetLead:
    "Geben Sie die E-Mail-Adresse Ihres Kontos ein; wir senden Ihnen einen Link, um ein neues Passwort zu wählen.",
  sendResetLink: "Link senden",
  resetSentLead: (email) => `Wenn ${email} hier ein Konto hat, ist ein Link zum Zurücksetzen unterwegs.`,
  backToSignIn: "Zurück zur Anmeldung",
  newPasswordTitle: "Neues Passwort wählen",
  newPasswordLead:
    "Ihre E-Mail-Adresse ist bestätigt. Wählen Sie das Passwort, mit dem Sie sich künftig anmelden.",
  newPassword: "Neues Passwort",
  savePassword: "Speichern und fortfahren",
  resendVerification: "Bestätigungsmail erneut senden",
  mfaTitle: "Bestätigung in zwei Schritten",
  mfaLead: "Geben Sie den Code aus Ihrer Authenticator-App oder einen Wiederherstellungscode ein.",
  code: "Code",
  verify: "Bestätigen",
  wantsAccess: "möchte auf Ihr Konto zugreifen",
  wantsDeviceAccess: "möchte von einem Gerät aus, das diesen Code zeigt, auf Ihr Konto zugreifen",
  deviceWarning:
    "Erlauben Sie das nur, wenn Sie es selbst auf Ihrem Gerät gestartet haben und es diesen Code zeigt. Niemand sollte Sie bitten, einen Code für ihn einzugeben.",
  willBeAbleTo: "Sie kann dann:",
  asksNothing: "Sie fragt nach keinen Daten, nur danach, dass Sie zugestimmt haben.",
  deny: "Ablehnen",
  allow: "Erlauben",
  signedInAs: "Angemeldet als",
  useAnotherAccount: "Anderes Konto verwenden",
  publishedBy: "Veröffentlicht von",
  loopbackWarning:
    "Diese App läuft auf Ihrem eigenen Computer. Erlauben Sie sie nur, wenn Sie sie gerade selbst gestartet haben.",
  unreviewedNote: "Diese App hat sich selbst registriert; ihr Name wurde nicht geprüft.",
  allowTitle: (client) => `${client} erlauben?`,
  deviceTitle: "Gerät verbinden",
  deviceLead: "Geben Sie den Code ein, den Ihr Gerät oder Ihr Terminal zeigt.",
  continue: "Weiter",
  deviceConnected: "Gerät verbunden",
  deviceConnectedLead: "Sie können diese Seite schließen und zu Ihrem Gerät zurückkehren.",
  deviceDenied: "Anfrage abgelehnt",
  deviceDeniedLead: "Das Gerät hat keinen Zugriff erhalten. Sie können diese Seite schließen.",
  problemTitle: "Dieser Anmeldelink funktioniert nicht",
  problemHint: "Gehen Sie zurück zur App und beginnen Sie erneut.",
  scopes: {
    openid: "Wissen, wer Sie sind (Ihre Konto-ID)",
    profile: "Ihren Namen, Ihr Bild und Ihre Sprache sehen",
    email: "Ihre E-Mail-Adresse sehen",
    phone: "Ihre Telefonnummer sehen",
    offline_access: "Verbunden bleiben, wenn Sie sie nicht benutzen",
    graphql: "Ihre Daten über die GraphQL-API in Ihrem Namen lesen und ändern",
  },
  errors: {
    wrongPassword: "E-Mail oder Passwort ist falsch.",
    unverified:
      "Bestätigen Sie zuerst Ihre E-Mail-Adresse: Folgen Sie dem Link in der Mail, die wir Ihnen gesendet haben.",
    disabled: "Dieses Konto ist deaktiviert. Wenden Sie sich an den Support der App.",
    wrongCode: "Dieser Code stimmt nicht.",
    expiredLink: "Dieser Anmeldelink oder Code ist ungültig, benutzt oder abgelaufen. Beginnen Sie erneut.",
    failed: "Die Anmeldung ist fehlgeschlagen.",
    tooManyAttempts: (seconds) => `Zu viele Versuche. Versuchen Sie es in ${seconds} Sekunden erneut.`,
    tooManyCodes: (seconds) => `Zu viele falsche Codes. Versuchen Sie es in ${seconds} Sekunden erneut.`,
    tooManyEmails: (seconds) => `Zu viele E-Mails. Versuchen Sie es in ${seconds} Sekunden erneut.`,
    enterEmailPassword: "Geben Sie Ihre E-Mail-Adresse und Ihr Passwort ein.",
    enterEmail: "Geben Sie eine gültige E-Mail-Adresse ein.",
    linksOff: "Anmeldelinks sind hier abgeschaltet.",
    signUpOff: "Hier können keine neuen Konten erstellt werden.",
    emailInUse:
      "Mit dieser E-Mail-Adresse gibt es schon ein Konto. Melden Sie sich an oder setzen Sie das Passwort zurück.",
    passwordTooShort: (min) => `Das Passwort ist zu kurz: mindestens ${min} Zeichen.`,
    passwordBreached: "Dieses Passwort ist aus einem bekannten Datenleck bekannt. Wählen Sie ein anderes.",
    emailNotAllowed: "Diese E-Mail-Adresse kann hier nicht verwendet werden.",
    turnstile: "Bestätigen Sie, dass Sie ein Mensch sind (die Prüfung unten), und versuchen Sie es erneut.",
    turnstileUnavailable: "Die Prüfung ist gerade nicht möglich. Versuchen Sie es gleich noch einmal.",
    otherBrowser:
      "Dieser Link wurde in einem anderen Browser angefordert. Fordern Sie hier, in diesem Browser, einen neuen an.",
    linkExpired: "Dieser Anmeldelink ist ungültig, benutzt oder abgelaufen.",
    resetExpired: "Diese Seite ist nicht mehr gültig. Fordern Sie einen neuen Link zum Zurücksetzen an.",
    providerFailed:
      "Die Anmeldung über diesen Anbieter hat nicht geklappt. Versuchen Sie es erneut oder wählen Sie einen anderen Weg.",
    otherSite: "Dieses Formular wurde von einer anderen Website gesendet.",
    unknownRequest: "Diese Anmeldeanfrage ist unbekannt oder abgelaufen.",
    deviceCodeWrong: "Dieser Code stimmt nicht oder ist abgelaufen. Prüfen Sie den Code auf Ihrem Gerät.",
  },
};

const CATALOG: Record<string, PageText> = { en, fr, de };

/** Language tags in preference order from an `Accept-Language` header (q-values honoured, at most 20 read). */
function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 500)
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1",
      );
      return { tag: tag.trim().toLowerCase(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.tag && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.tag);
}

/** The page's words for this request: `uiLocales` (the OAuth2 request's) first, then the browser's languages. */
export function pageText(c: Context, uiLocales: string[] = []): PageText {
  for (const tag of [
    ...uiLocales.map((l) => l.toLowerCase()),
    ...acceptedLanguages(c.req.header("accept-language")),
  ]) {
    const found = CATALOG[tag.split("-")[0] ?? ""];
    if (found) return found;
  }
  return en;
}
