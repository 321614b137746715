import type { Mails } from "../en/mails";

export const mails: Mails = {
  "email-verify": {
    subject: "Bestätigen Sie Ihre E-Mail-Adresse",
    text: "Hallo ${displayName},\n\nmit dieser E-Mail-Adresse wurde ein Konto angelegt. Wenn Sie das waren, bestätigen Sie die Adresse mit diesem Link:\n${link}\n\nWenn nicht, folgen Sie dem Link nicht: Jemand anderes hat diese Adresse und ihr Passwort gewählt. Ignorieren Sie diese E-Mail, dann bleibt das Konto unbenutzbar.\n",
    html: '<p>Hallo ${displayName},</p><p>mit dieser E-Mail-Adresse wurde ein Konto angelegt. Wenn Sie das waren, <a href="${link}">bestätigen Sie Ihre E-Mail-Adresse</a>.</p><p>Wenn nicht, folgen Sie dem Link nicht: Jemand anderes hat diese Adresse und ihr Passwort gewählt. Ignorieren Sie diese E-Mail, dann bleibt das Konto unbenutzbar.</p>',
  },
  "signin-passwordless": {
    subject: "Ihr Anmeldelink",
    text: "Hallo ${displayName},\n\nmit diesem Link melden Sie sich an:\n${link}\n\nEr ist eine Stunde gültig.\n",
    html: '<p>Hallo ${displayName},</p><p><a href="${link}">Anmelden</a></p><p>Der Link ist eine Stunde gültig.</p>',
  },
  "signin-otp": {
    subject: "Ihr Anmeldecode",
    text: "Hallo ${displayName},\n\nIhr Anmeldecode lautet ${code}. Er ist zehn Minuten gültig.\n",
    html: "<p>Hallo ${displayName},</p><p>Ihr Anmeldecode lautet <strong>${code}</strong>. Er ist zehn Minuten gültig.</p>",
  },
  reauthentication: {
    subject: "Bestätigen Sie, dass Sie es sind",
    text: "Hallo ${displayName},\n\nUm zu bestätigen, dass Sie es sind, geben Sie diesen Code ein: ${code}. Er ist fünf Minuten gültig.\n\nWenn Sie ihn nicht angefordert haben, nutzt vielleicht jemand Ihr Konto: Ändern Sie Ihr Passwort.\n",
    html: "<p>Hallo ${displayName},</p><p>Um zu bestätigen, dass Sie es sind, geben Sie diesen Code ein: <strong>${code}</strong>. Er ist fünf Minuten gültig.</p><p>Wenn Sie ihn nicht angefordert haben, nutzt vielleicht jemand Ihr Konto: Ändern Sie Ihr Passwort.</p>",
  },
  "mfa-email": {
    subject: "Ihr Code für den zweiten Schritt",
    text: "Hallo ${displayName},\n\neine Anmeldung bei Ihrem Konto wartet auf den zweiten Schritt. Um sie abzuschließen, geben Sie diesen Code ein: ${code}. Er ist fünf Minuten gültig.\n\nWenn Sie das nicht waren, geben Sie den Code an niemanden weiter und ändern Sie Ihr Passwort.\n",
    html: "<p>Hallo ${displayName},</p><p>eine Anmeldung bei Ihrem Konto wartet auf den zweiten Schritt. Um sie abzuschließen, geben Sie diesen Code ein: <strong>${code}</strong>. Er ist fünf Minuten gültig.</p><p>Wenn Sie das nicht waren, geben Sie den Code an niemanden weiter und ändern Sie Ihr Passwort.</p>",
  },
  "user-invitation": {
    subject: "Sie sind eingeladen",
    text: "Hallo,\n\nSie wurden eingeladen, ein Konto mit ${email} anzulegen. Folgen Sie diesem Link, um die Einladung anzunehmen:\n${link}\n\nDer Link ist eine Stunde gültig. Wenn Sie diese Einladung nicht erwartet haben, ignorieren Sie diese E-Mail.\n",
    html: '<p>Hallo,</p><p>Sie wurden eingeladen, ein Konto mit ${email} anzulegen. <a href="${link}">Einladung annehmen</a>.</p><p>Der Link ist eine Stunde gültig. Wenn Sie diese Einladung nicht erwartet haben, ignorieren Sie diese E-Mail.</p>',
  },
  "password-reset": {
    subject: "Setzen Sie Ihr Passwort zurück",
    text: "Hallo ${displayName},\n\nmit diesem Link setzen Sie Ihr Passwort zurück:\n${link}\n\nWenn Sie das nicht angefordert haben, ignorieren Sie diese Nachricht.\n",
    html: '<p>Hallo ${displayName},</p><p><a href="${link}">Passwort zurücksetzen</a></p><p>Wenn Sie das nicht angefordert haben, ignorieren Sie diese Nachricht.</p>',
  },
  "email-confirm-change": {
    subject: "Bestätigen Sie Ihre neue E-Mail-Adresse",
    text: "Hallo ${displayName},\n\nmit diesem Link wird ${newEmail} Ihre E-Mail-Adresse:\n${link}\n",
    html: '<p>Hallo ${displayName},</p><p><a href="${link}">${newEmail} als E-Mail-Adresse bestätigen</a></p>',
  },
  "org-invitation": {
    subject: "Einladung zu ${orgName}",
    text: "Hallo,\n\n${inviterName} hat ${email} eingeladen, ${orgName} als ${role} beizutreten. Melden Sie sich mit dieser Adresse an oder registrieren Sie sich, dann nehmen Sie an:\n${link}\n\nDie Einladung gilt sieben Tage. Wenn Sie sie nicht erwartet haben, ignorieren Sie diese Nachricht.\n",
    html: '<p>Hallo,</p><p>${inviterName} hat ${email} eingeladen, <strong>${orgName}</strong> als ${role} beizutreten. Melden Sie sich mit dieser Adresse an oder registrieren Sie sich, dann <a href="${link}">nehmen Sie die Einladung an</a>.</p><p>Die Einladung gilt sieben Tage. Wenn Sie sie nicht erwartet haben, ignorieren Sie diese Nachricht.</p>',
  },
};
