import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} bittet um Ihre Zustimmung",
    text: "Hallo ${displayName},\n\n${clientName} bittet Sie, eine Anfrage zu bestätigen.\n\nNachricht von ${clientName}: ${bindingMessage}\n\nÖffnen Sie diesen Link, melden Sie sich an und stimmen Sie vor ${time} zu oder lehnen Sie ab:\n${link}\n\nDas Öffnen des Links bestätigt nichts. Wenn Sie das nicht erwartet haben, lehnen Sie ab.\n",
    html: '<p>Hallo ${displayName},</p><p>${clientName} bittet Sie, eine Anfrage zu bestätigen.</p><p>Nachricht von ${clientName}: ${bindingMessage}</p><p><a href="${link}">Anfrage prüfen</a> (anmelden, dann zustimmen oder ablehnen) vor ${time}.</p><p>Das Öffnen des Links bestätigt nichts. Wenn Sie das nicht erwartet haben, lehnen Sie ab.</p>',
  },
  noMessage: "(keine Nachricht)",
  messageFrom: (clientName: string) => `Nachricht von ${clientName}`,
  wantsApproval: "bittet um Ihre Zustimmung, im Auftrag einer App, die Sie nutzen",
  warning:
    "Stimmen Sie nur zu, wenn Sie das gerade selbst tun und die Nachricht mit der in der App übereinstimmt. Wenn Sie das nicht erwartet haben, lehnen Sie ab.",
  approvedTitle: "Anfrage bestätigt",
  approvedLead: "Die App wurde benachrichtigt. Sie können diese Seite schließen.",
  deniedTitle: "Anfrage abgelehnt",
  deniedLead: "Die App wurde über Ihre Ablehnung informiert. Sie können diese Seite schließen.",
  otherAccountTitle: "Diese Anfrage gilt einem anderen Konto",
  otherAccountLead:
    "Melden Sie sich mit dem Konto an, an das die Anfrage ging, und öffnen Sie den Link erneut.",
  account: {
    title: "Wartet auf Sie",
    lead: "Apps, die um Ihre Zustimmung gebeten haben. Prüfen Sie jede; nichts ist bestätigt, bevor Sie zustimmen.",
    client: "App",
    message: "Nachricht",
    expires: "Läuft ab",
    review: "Prüfen",
    none: "Nichts wartet auf Ihre Zustimmung.",
  },
};
