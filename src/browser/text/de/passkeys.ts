import type { Passkeys } from "../en/passkeys";

export const passkeys: Passkeys = {
  mail: {
    subject: "Ihrem Konto wurde ein Passkey hinzugefügt",
    text: "Hallo ${displayName},\n\nIhr Passwortmanager hat nach Ihrer Anmeldung um ${time} einen Passkey für Ihr Konto erstellt. Beim nächsten Mal können Sie sich damit statt mit Ihrem Passwort anmelden.\n\nWenn Sie es nicht waren, entfernen Sie den Passkey und ändern Sie Ihr Passwort:\n${link}\n",
    html: '<p>Hallo ${displayName},</p><p>Ihr Passwortmanager hat nach Ihrer Anmeldung um ${time} einen Passkey für Ihr Konto erstellt. Beim nächsten Mal können Sie sich damit statt mit Ihrem Passwort anmelden.</p><p>Wenn Sie es nicht waren, <a href="${link}">entfernen Sie den Passkey</a> und ändern Sie Ihr Passwort.</p>',
  },
  signUp: "Mit einem Passkey registrieren",
  signUpProblem:
    "Der Passkey konnte nicht erstellt werden. Versuchen Sie es erneut oder registrieren Sie sich mit einem Passwort.",
  signUpMailed:
    "Prüfen Sie Ihre E-Mails: Folgen Sie dem gesendeten Link, um die Registrierung abzuschließen, und melden Sie sich dann mit Ihrem Passkey an.",
};
