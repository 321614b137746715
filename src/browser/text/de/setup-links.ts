import type { SetupLinks } from "../en/setup-links";

/** Die Seiten des Einrichtungslinks (Vertrag operators.md §5) und die Mail an die Inhaber der Organisation. */
export const setupLinks: SetupLinks = {
  title: (org: string) => `Anmeldung für ${org} einrichten`,
  lead: "Mit diesem Link verbinden Sie als IT-Administrator den Identitätsanbieter Ihrer Organisation. Nichts, was Sie hier tun, wirkt, bevor ein Inhaber der Organisation es einschaltet.",
  expires: (date: string) => `Dieser Link gilt bis ${date}.`,
  gone: "Dieser Einrichtungslink funktioniert nicht: Er ist falsch geschrieben, abgelaufen oder widerrufen. Bitten Sie die Person, die ihn geschickt hat, um einen neuen.",
  goneTitle: "Einrichtungslink ungültig",
  tooMany: (seconds: number) =>
    `Zu viele Versuche aus Ihrem Netzwerk. Versuchen Sie es in ${seconds} Sekunden erneut.`,
  notAllowed: "Dieser Einrichtungslink umfasst diesen Schritt nicht.",
  otherSite:
    "Dieses Formular wurde von einer anderen Website gesendet. Öffnen Sie den Einrichtungslink erneut und nutzen Sie das Formular auf seiner Seite.",
  back: "Zurück zur Übersicht",
  steps: "Schritte",
  stepDomains: "E-Mail-Domains bestätigen",
  stepSso: "Single Sign-On verbinden",
  stepScim: "Benutzer per SCIM bereitstellen",
  done: "Erledigt",
  todo: "Offen",
  domainsLead:
    "Weisen Sie nach, dass Ihrer Organisation eine E-Mail-Domain gehört, indem Sie einen DNS-TXT-Eintrag anlegen. Das hier eingerichtete Single Sign-On gilt nur für die auf dieser Seite bestätigten Domains.",
  domainLabel: "E-Mail-Domain",
  addDomain: "Domain hinzufügen",
  txtName: "Name des TXT-Eintrags",
  txtValue: "Wert des TXT-Eintrags",
  checkDomain: "Eintrag prüfen",
  verified: "Bestätigt",
  notVerified: "Noch nicht bestätigt",
  domainChecked: (domain: string) => `${domain} ist bestätigt.`,
  domainNotFound: (domain: string) =>
    `Der TXT-Eintrag für ${domain} wurde noch nicht gefunden. DNS-Änderungen können einige Minuten dauern; prüfen Sie später erneut.`,
  dnsUnavailable:
    "Die DNS-Abfrage hat gerade nicht geantwortet. Nichts wurde geändert: Prüfen Sie in einer Minute erneut.",
  domainVerifiedBefore: (domain: string) =>
    `${domain} wurde für diese Organisation bereits außerhalb dieses Links bestätigt. Ein Inhaber der Organisation entscheidet, ob Ihre Verbindung sie bedient.`,
  domainRefused: (domain: string) =>
    `${domain} kann nicht hinzugefügt werden: Es ist eine öffentliche Mail-Domain, kein Domainname oder von einer anderen Organisation bestätigt.`,
  ssoLead:
    "Wählen Sie Ihren Identitätsanbieter: Die Anleitung nennt die genauen Werte zum Einfügen und fragt nach dem, was er zurückgibt.",
  chooseIdp: "Identitätsanbieter",
  start: "Starten",
  connections: "Über diesen Link eingerichtete Verbindungen",
  noConnections: "Noch keine.",
  inactive: "Nicht aktiv: Ein Inhaber schaltet sie nach einem erfolgreichen Test ein",
  active: "Aktiv",
  guideTitle: (idp: string) => `${idp} verbinden`,
  inYourIdp: (idp: string) => `In ${idp}`,
  pasteThese: "Fügen Sie diese Werte ein:",
  giveBack: "Geben Sie dann zurück, was angezeigt wird:",
  metadataUrl: "Metadaten-URL des IdP",
  metadataXml: "Oder das Metadaten-XML des IdP",
  issuer: "Aussteller-URL (ihr Discovery-Dokument liegt darunter unter /.well-known/openid-configuration)",
  clientId: "Client-ID",
  clientSecret: "Client-Geheimnis",
  create: "Verbindung speichern",
  noDomainsYet:
    "Bestätigen Sie zuerst eine Domain: Die Verbindung gilt nur für die über diesen Link bestätigten Domains.",
  connectionTitle: (type: string) => `${type}-Verbindung`,
  valuesToPaste: "Werte für Ihren Identitätsanbieter",
  test: "Verbindung testen",
  testLead:
    "Melden Sie sich bei Ihrem Identitätsanbieter mit einem Konto einer bestätigten Domain an. Hier wird niemand angemeldet: Der Test prüft nur die Antwort.",
  testNone: "Noch nicht getestet.",
  testOk: (email: string) =>
    `Der Test war erfolgreich: Ihr Identitätsanbieter hat ${email} bestätigt. Die Inhaber der Organisation wurden informiert, dass sie eingeschaltet werden kann.`,
  testFailed: (why: string) => `Der letzte Test ist fehlgeschlagen: ${why}`,
  testWhy: {
    "sso-email-outside-domains":
      "Die übermittelte E-Mail-Adresse liegt in keiner über diesen Link bestätigten Domain.",
    "sso-assertion-invalid": "Die Antwort ließ sich nicht überprüfen (Signatur, Zielgruppe oder Zeit).",
    "invalid-state":
      "Der Test wurde nicht in diesem Browser gestartet oder dauerte zu lange. Starten Sie ihn erneut.",
    other: "Die Antwort des Identitätsanbieters wurde abgelehnt.",
  },
  scimLead:
    "Ihr Identitätsanbieter legt Ihre Mitarbeitenden hier an, ändert und deaktiviert sie. Ein auf dieser Seite erstelltes Token kann niemanden zum Inhaber oder Administrator der Organisation machen.",
  scimBaseUrl: "SCIM-Basis-URL",
  scimToken: "Bearer-Token",
  scimTokenOnce: "Kopieren Sie das Token jetzt: Es wird nur einmal angezeigt.",
  makeToken: "SCIM-Token erstellen",
  tokens: "Über diesen Link erstellte Tokens",
  noTokens: "Noch keine.",
  lastUsed: (date: string) => `Ihr Identitätsanbieter hat zuletzt am ${date} angefragt.`,
  neverUsed:
    "Ihr Identitätsanbieter hat noch nicht angefragt: Führen Sie dort den Verbindungstest aus und prüfen Sie dann hier.",
  checkAgain: "Erneut prüfen",
  made: (date: string) => `Erstellt am ${date}`,
  readyMail: {
    subject: "Eine Anmeldeverbindung für ${orgName} kann eingeschaltet werden",
    text: "Hallo ${displayName},\n\nIhr IT-Administrator hat über einen Einrichtungslink eine ${type}-Verbindung für ${orgName} eingerichtet, und ihr Test war erfolgreich (der Identitätsanbieter hat ${email} bestätigt).\n\nSie bleibt ausgeschaltet, bis ein Inhaber sie einschaltet. Verbindung: ${connectionId}.\n${link}\n",
    html: '<p>Hallo ${displayName},</p><p>Ihr IT-Administrator hat über einen Einrichtungslink eine ${type}-Verbindung für <strong>${orgName}</strong> eingerichtet, und ihr Test war erfolgreich (der Identitätsanbieter hat ${email} bestätigt).</p><p>Sie bleibt ausgeschaltet, bis ein Inhaber sie einschaltet. Verbindung: ${connectionId}.</p><p><a href="${link}">Zur App</a></p>',
  },
};
