import type { Impersonation } from "../en/impersonation";

export const impersonation: Impersonation = {
  banner: (actor: string) =>
    `${actor} agit en tant que cet utilisateur (usurpation d’identité autorisée). Rien ne peut être accordé ni modifié ici.`,
  readOnly:
    "Lecture seule : tant que le support agit en tant que cet utilisateur, les réglages du compte peuvent être consultés mais pas modifiés ; l’utilisateur les modifie dans sa propre session.",
  sessionLabel: (actor: string) => `Session ouverte par ${actor} en votre nom`,
  mail: {
    subject: "Quelqu’un du support a agi en votre nom",
    text: "Bonjour ${displayName},\n\n${actor} a agi en votre nom de ${start} à ${end}, pour ce motif : ${reason}\n\nRien n’a pu être accordé ni modifié dans votre compte pendant ce temps. Vos sessions sont listées ici :\n${link}\n",
    html: '<p>Bonjour ${displayName},</p><p>${actor} a agi en votre nom de ${start} à ${end}, pour ce motif : ${reason}</p><p>Rien n’a pu être accordé ni modifié dans votre compte pendant ce temps. <a href="${link}">Voir vos sessions</a>.</p>',
  },
};
