import type { SecondStepWords } from "../en/second-step";

/** The choice of second step in French. */
export const secondStep: SecondStepWords = {
  title: "Deuxième étape",
  lead: "Ce qu’une connexion avec votre mot de passe demande ensuite.",
  current: (name: string) => `Actuellement : ${name}.`,
  none: "rien (votre mot de passe suffit pour vous connecter)",
  totpFirst:
    "Tant que la validation en deux étapes est activée, votre application d’authentification est la deuxième étape. Désactivez-la ci-dessus pour en choisir une autre.",
  totp: "un code de votre application d’authentification",
  email: (email: string) => `Un code envoyé par e-mail à ${email}`,
  passkey: "Votre clé d’accès ou clé de sécurité",
  sms: "Un code envoyé par SMS à votre téléphone",
  off: "Rien après le mot de passe",
  save: "Enregistrer",
  emailUnverified: "Votre adresse e-mail n’est pas vérifiée : elle ne peut pas recevoir les codes.",
  noPasskey: "Ajoutez d’abord une clé d’accès pour la choisir.",
  changed: "Votre deuxième étape a été modifiée.",
  errors: {
    unverified:
      "Vérifiez d’abord votre adresse e-mail : une adresse non vérifiée ne peut pas recevoir les codes.",
    missing: "Vous ne l’avez pas encore : ajoutez-la d’abord.",
  },
  pageEmailLead: "Saisissez le code que nous venons de vous envoyer par e-mail. Il est valable cinq minutes.",
  pageSmsLead: "Saisissez le code que nous venons d’envoyer par SMS à votre téléphone.",
  pagePasskey: "La deuxième étape de ce compte est une clé d’accès : connectez-vous avec votre clé d’accès.",
};
