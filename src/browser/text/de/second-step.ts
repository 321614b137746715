import type { SecondStepWords } from "../en/second-step";

/** The choice of second step in German (formal "Sie"). */
export const secondStep: SecondStepWords = {
  title: "Zweiter Schritt",
  lead: "Was eine Anmeldung mit Ihrem Passwort danach verlangt.",
  current: (name: string) => `Derzeit: ${name}.`,
  none: "nichts (Ihr Passwort allein meldet Sie an)",
  totpFirst:
    "Solange die Bestätigung in zwei Schritten aktiv ist, ist Ihre Authenticator-App der zweite Schritt. Schalten Sie sie oben aus, um etwas anderes zu wählen.",
  totp: "ein Code aus Ihrer Authenticator-App",
  email: (email: string) => `Ein Code per E-Mail an ${email}`,
  passkey: "Ihr Passkey oder Sicherheitsschlüssel",
  sms: "Ein Code per SMS an Ihr Telefon",
  off: "Nichts nach dem Passwort",
  save: "Speichern",
  emailUnverified: "Ihre E-Mail-Adresse ist nicht bestätigt und kann daher keine Codes erhalten.",
  noPasskey: "Fügen Sie zuerst einen Passkey hinzu, um ihn zu wählen.",
  changed: "Ihr zweiter Schritt wurde geändert.",
  errors: {
    unverified:
      "Bestätigen Sie zuerst Ihre E-Mail-Adresse: An eine unbestätigte Adresse werden keine Codes gesendet.",
    missing: "Das haben Sie noch nicht: Fügen Sie es zuerst hinzu.",
  },
  pageEmailLead:
    "Geben Sie den Code ein, den wir Ihnen gerade per E-Mail gesendet haben. Er ist fünf Minuten gültig.",
  pageSmsLead: "Geben Sie den Code ein, den wir gerade per SMS an Ihr Telefon gesendet haben.",
  pagePasskey: "Der zweite Schritt dieses Kontos ist ein Passkey: Melden Sie sich mit Ihrem Passkey an.",
};
