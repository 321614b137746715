import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  signInLead: (name: string) => `Melden Sie sich an, um mit ${name} fortzufahren.`,
  signUpLead: (name: string) => `Erstellen Sie Ihr Konto, um mit ${name} fortzufahren.`,
  accountSignInLead: "Melden Sie sich an, um Ihr Konto zu verwalten.",
  accountSignUpLead: "Erstellen Sie Ihr Konto. Danach können Sie es hier verwalten.",
  redirectNotAllowed:
    "Dieser Anmeldelink kann nicht verwendet werden: Die Adresse, zu der Sie danach zurückkehren sollen, ist für diesen Dienst nicht zugelassen. Kehren Sie zur App zurück und versuchen Sie es erneut.",
  promptNotSupported: "Dieser Anmeldelink ist ungültig: Als „prompt“ ist nur „login“ zulässig.",
  completedAlready:
    "Diese Anmeldung wurde bereits abgeschlossen. Kehren Sie zur App zurück; sind Sie dort nicht angemeldet, melden Sie sich von dort aus erneut an.",
};
