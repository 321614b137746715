import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  signInLead: (name: string) => `Connectez-vous pour continuer vers ${name}.`,
  signUpLead: (name: string) => `Créez votre compte pour continuer vers ${name}.`,
  accountSignInLead: "Connectez-vous pour gérer votre compte.",
  accountSignUpLead: "Créez votre compte. Vous pourrez ensuite le gérer ici.",
  redirectNotAllowed:
    "Ce lien de connexion ne peut pas être utilisé : l’adresse de retour n’est pas une adresse vers laquelle ce service peut vous renvoyer. Revenez à l’application et réessayez.",
  promptNotSupported: "Ce lien de connexion n’est pas valide : le seul « prompt » accepté est « login ».",
  completedAlready:
    "Cette connexion a déjà été effectuée. Revenez à l’application ; si vous n’y êtes pas connecté, reconnectez-vous depuis celle-ci.",
};
