import type { Lockout } from "../en/lockout";

export const lockout: Lockout = {
  mail: {
    subject: "Die Anmeldung bei Ihrem Konto ist pausiert",
    text: "Hallo ${displayName},\n\nes gab zu viele fehlgeschlagene Versuche, sich mit ${method} bei Ihrem Konto anzumelden. Diese Art der Anmeldung ist deshalb für ${duration} pausiert.\n\nWenn Sie das waren, entsperren Sie sie jetzt mit diesem Link:\n${link}\n\nWenn nicht, versucht möglicherweise jemand, in Ihr Konto zu gelangen. Es wurde nichts geändert. Wählen Sie ein sicheres Passwort, das Sie nirgendwo sonst verwenden.\n",
    html: '<p>Hallo ${displayName},</p><p>es gab zu viele fehlgeschlagene Versuche, sich mit ${method} bei Ihrem Konto anzumelden. Diese Art der Anmeldung ist deshalb für ${duration} pausiert.</p><p>Wenn Sie das waren, <a href="${link}">entsperren Sie sie jetzt</a>.</p><p>Wenn nicht, versucht möglicherweise jemand, in Ihr Konto zu gelangen. Es wurde nichts geändert. Wählen Sie ein sicheres Passwort, das Sie nirgendwo sonst verwenden.</p>',
  },
  methods: {
    password: "Ihrem Passwort",
    "email-otp": "einem per E-Mail gesendeten Code",
    "sms-otp": "einem per SMS gesendeten Code",
    totp: "einem Code aus Ihrer Authenticator-App",
    "recovery-code": "einem Wiederherstellungscode",
  },
  duration: {
    minutes: (count: number) => `${count} Minuten`,
    hour: "1 Stunde",
    hours: (count: number) => `${count} Stunden`,
  },
  page: {
    title: "Anmeldung entsperren",
    lead: "Nach zu vielen fehlgeschlagenen Versuchen wurde die Anmeldung bei Ihrem Konto mit einer Methode pausiert. Wenn die Versuche von Ihnen stammen, entsperren Sie sie jetzt.",
    unlock: "Entsperren",
    doneTitle: "Die Anmeldung ist entsperrt",
    doneLead: "Sie können sich wieder anmelden.",
    toApp: "Weiter zur App",
    failedTitle: "Dieser Link funktioniert nicht mehr",
    failedLead:
      "Er wurde bereits verwendet oder ist älter als einen Tag. Wenn die Anmeldung noch pausiert ist, warten Sie, bis die Pause endet.",
    incomplete: "Dieser Link ist unvollständig. Öffnen Sie ihn genau so, wie er in der E-Mail stand.",
    otherSite: "Dieses Formular wurde von einer anderen Website gesendet. Es wurde nichts geändert.",
    unavailable: "Das Entsperren ist gerade nicht möglich. Versuchen Sie es gleich noch einmal.",
  },
};
