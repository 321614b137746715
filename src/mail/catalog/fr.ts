import type { LocaleTemplates } from "../templates";

export const fr: LocaleTemplates = {
  "email-verify": {
    subject: "Vérifiez votre adresse e-mail",
    text: "Bonjour ${displayName},\n\nUtilisez ce lien pour vérifier votre adresse e-mail :\n${link}\n",
    html: '<p>Bonjour ${displayName},</p><p><a href="${link}">Vérifier votre adresse e-mail</a></p>',
  },
  "signin-passwordless": {
    subject: "Votre lien de connexion",
    text: "Bonjour ${displayName},\n\nUtilisez ce lien pour vous connecter :\n${link}\n\nIl est valable une heure.\n",
    html: '<p>Bonjour ${displayName},</p><p><a href="${link}">Se connecter</a></p><p>Le lien est valable une heure.</p>',
  },
  "signin-otp": {
    subject: "Votre code de connexion",
    text: "Bonjour ${displayName},\n\nVotre code de connexion est ${code}. Il est valable dix minutes.\n",
    html: "<p>Bonjour ${displayName},</p><p>Votre code de connexion est <strong>${code}</strong>. Il est valable dix minutes.</p>",
  },
  "password-reset": {
    subject: "Réinitialisez votre mot de passe",
    text: "Bonjour ${displayName},\n\nUtilisez ce lien pour réinitialiser votre mot de passe :\n${link}\n\nSi vous n'êtes pas à l'origine de cette demande, ignorez ce message.\n",
    html: "<p>Bonjour ${displayName},</p><p><a href=\"${link}\">Réinitialiser votre mot de passe</a></p><p>Si vous n'êtes pas à l'origine de cette demande, ignorez ce message.</p>",
  },
  "email-confirm-change": {
    subject: "Confirmez votre nouvelle adresse e-mail",
    text: "Bonjour ${displayName},\n\nUtilisez ce lien pour adopter ${newEmail} comme adresse e-mail :\n${link}\n",
    html: '<p>Bonjour ${displayName},</p><p><a href="${link}">Confirmer ${newEmail} comme adresse e-mail</a></p>',
  },
};
