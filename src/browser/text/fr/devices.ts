import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "Nouvelle connexion à votre compte",
    text: "Bonjour ${displayName},\n\nUne connexion à votre compte a eu lieu depuis un nouvel appareil : ${device}, ${place}, le ${time}.${risk}\n\nSi c’était vous, vous n’avez rien à faire. Sinon, déconnectez cette session et changez votre mot de passe :\n${link}\n",
    html: '<p>Bonjour ${displayName},</p><p>Une connexion à votre compte a eu lieu depuis un nouvel appareil : ${device}, ${place}, le ${time}.${risk}</p><p>Si c’était vous, vous n’avez rien à faire. Sinon, <a href="${link}">déconnectez cette session</a> et changez votre mot de passe.</p>',
  },
  device: (browser: string, system: string) => `${browser} sous ${system}`,
  unknownBrowser: "un navigateur inconnu",
  risk: {
    low: " Nous avons évalué le risque de cette connexion comme faible.",
    medium: " Nous avons évalué le risque de cette connexion comme moyen.",
    high: " Nous avons évalué le risque de cette connexion comme élevé.",
  },
  unknownPlace: "un lieu inconnu",
};
