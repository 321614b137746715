import type { Passkeys } from "../en/passkeys";

export const passkeys: Passkeys = {
  mail: {
    subject: "Une clé d’accès a été ajoutée à votre compte",
    text: "Bonjour ${displayName},\n\nVotre gestionnaire de mots de passe a créé une clé d’accès pour votre compte après votre connexion, à ${time}. La prochaine fois, vous pourrez vous connecter avec elle au lieu de votre mot de passe.\n\nSi ce n’était pas vous, supprimez la clé d’accès et changez votre mot de passe :\n${link}\n",
    html: '<p>Bonjour ${displayName},</p><p>Votre gestionnaire de mots de passe a créé une clé d’accès pour votre compte après votre connexion, à ${time}. La prochaine fois, vous pourrez vous connecter avec elle au lieu de votre mot de passe.</p><p>Si ce n’était pas vous, <a href="${link}">supprimez la clé d’accès</a> et changez votre mot de passe.</p>',
  },
  signUp: "S’inscrire avec une clé d’accès",
  signUpProblem: "La clé d’accès n’a pas pu être créée. Réessayez, ou inscrivez-vous avec un mot de passe.",
  signUpMailed:
    "Consultez vos e-mails : suivez le lien envoyé pour terminer votre inscription, puis connectez-vous avec votre clé d’accès.",
};
