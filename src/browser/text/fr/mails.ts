import type { Mails } from "../en/mails";

export const mails: Mails = {
  "email-verify": {
    subject: "Vérifiez votre adresse e-mail",
    text: "Bonjour ${displayName},\n\nUn compte a été créé avec cette adresse e-mail. Si c'est vous, utilisez ce lien pour vérifier l'adresse :\n${link}\n\nSi vous ne l'avez pas créé, ne suivez pas le lien : quelqu'un d'autre a choisi cette adresse et son mot de passe. Ignorez ce message, et le compte reste inutilisable.\n",
    html: "<p>Bonjour ${displayName},</p><p>Un compte a été créé avec cette adresse e-mail. Si c'est vous, <a href=\"${link}\">vérifiez votre adresse e-mail</a>.</p><p>Si vous ne l'avez pas créé, ne suivez pas le lien : quelqu'un d'autre a choisi cette adresse et son mot de passe. Ignorez ce message, et le compte reste inutilisable.</p>",
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
  reauthentication: {
    subject: "Confirmez que c'est bien vous",
    text: "Bonjour ${displayName},\n\nPour confirmer que c'est bien vous, saisissez ce code : ${code}. Il est valable cinq minutes.\n\nSi vous ne l'avez pas demandé, quelqu'un utilise peut-être votre compte : changez votre mot de passe.\n",
    html: "<p>Bonjour ${displayName},</p><p>Pour confirmer que c'est bien vous, saisissez ce code : <strong>${code}</strong>. Il est valable cinq minutes.</p><p>Si vous ne l'avez pas demandé, quelqu'un utilise peut-être votre compte : changez votre mot de passe.</p>",
  },
  "mfa-email": {
    subject: "Votre code de deuxième étape",
    text: "Bonjour ${displayName},\n\nUne connexion à votre compte attend sa deuxième étape. Pour la terminer, saisissez ce code : ${code}. Il est valable cinq minutes.\n\nSi ce n’était pas vous, ne communiquez ce code à personne et changez votre mot de passe.\n",
    html: "<p>Bonjour ${displayName},</p><p>Une connexion à votre compte attend sa deuxième étape. Pour la terminer, saisissez ce code : <strong>${code}</strong>. Il est valable cinq minutes.</p><p>Si ce n’était pas vous, ne communiquez ce code à personne et changez votre mot de passe.</p>",
  },
  "user-invitation": {
    subject: "Vous êtes invité",
    text: "Bonjour,\n\nVous avez été invité à créer un compte avec ${email}. Suivez ce lien pour accepter :\n${link}\n\nLe lien est valable une heure. Si vous n’attendiez pas cette invitation, ignorez ce message.\n",
    html: '<p>Bonjour,</p><p>Vous avez été invité à créer un compte avec ${email}. <a href="${link}">Accepter l’invitation</a>.</p><p>Le lien est valable une heure. Si vous n’attendiez pas cette invitation, ignorez ce message.</p>',
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
  "org-invitation": {
    subject: "Vous êtes invité à rejoindre ${orgName}",
    text: "Bonjour,\n\n${inviterName} a invité ${email} à rejoindre ${orgName} en tant que ${role}. Connectez-vous ou inscrivez-vous avec cette adresse, puis acceptez :\n${link}\n\nL'invitation est valable sept jours. Si vous ne l'attendiez pas, ignorez ce message.\n",
    html: "<p>Bonjour,</p><p>${inviterName} a invité ${email} à rejoindre <strong>${orgName}</strong> en tant que ${role}. Connectez-vous ou inscrivez-vous avec cette adresse, puis <a href=\"${link}\">acceptez l'invitation</a>.</p><p>L'invitation est valable sept jours. Si vous ne l'attendiez pas, ignorez ce message.</p>",
  },
};
