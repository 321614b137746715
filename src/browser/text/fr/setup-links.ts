import type { SetupLinks } from "../en/setup-links";

/** Les pages du lien de configuration (contrat operators.md §5) et le courriel aux propriétaires de l'organisation. */
export const setupLinks: SetupLinks = {
  title: (org: string) => `Configurer la connexion pour ${org}`,
  lead: "Ce lien vous permet, en tant qu'administrateur informatique, de relier le fournisseur d'identité de votre organisation. Rien de ce que vous faites ici ne prend effet avant qu'un propriétaire de l'organisation ne l'active.",
  expires: (date: string) => `Ce lien fonctionne jusqu'au ${date}.`,
  gone: "Ce lien de configuration ne fonctionne pas : il est mal saisi, expiré ou révoqué. Demandez-en un nouveau à la personne qui vous l'a envoyé.",
  goneTitle: "Lien de configuration non valide",
  tooMany: (seconds: number) => `Trop de tentatives depuis votre réseau. Réessayez dans ${seconds} secondes.`,
  notAllowed: "Ce lien de configuration ne comprend pas cette étape.",
  otherSite:
    "Ce formulaire a été envoyé depuis un autre site. Ouvrez à nouveau le lien de configuration et utilisez le formulaire de sa page.",
  back: "Retour à la vue d'ensemble",
  steps: "Étapes",
  stepDomains: "Vérifier vos domaines de messagerie",
  stepSso: "Connecter l'authentification unique",
  stepScim: "Provisionner les utilisateurs avec SCIM",
  done: "Terminé",
  todo: "À faire",
  domainsLead:
    "Prouvez que votre organisation possède un domaine de messagerie en ajoutant un enregistrement DNS TXT. L'authentification unique configurée ici ne sert que les domaines vérifiés sur cette page.",
  domainLabel: "Domaine de messagerie",
  addDomain: "Ajouter le domaine",
  txtName: "Nom de l'enregistrement TXT",
  txtValue: "Valeur de l'enregistrement TXT",
  checkDomain: "Vérifier l'enregistrement",
  verified: "Vérifié",
  notVerified: "Pas encore vérifié",
  domainChecked: (domain: string) => `${domain} est vérifié.`,
  domainNotFound: (domain: string) =>
    `L'enregistrement TXT de ${domain} est introuvable pour l'instant. Les changements DNS peuvent prendre quelques minutes ; vérifiez plus tard.`,
  dnsUnavailable:
    "La requête DNS n'a pas répondu pour l'instant. Rien n'a été modifié : vérifiez à nouveau dans une minute.",
  domainVerifiedBefore: (domain: string) =>
    `${domain} a déjà été vérifié pour cette organisation, en dehors de ce lien. Un propriétaire de l'organisation décide si votre connexion le sert.`,
  domainRefused: (domain: string) =>
    `${domain} ne peut pas être ajouté : c'est un domaine de messagerie public, pas un nom de domaine, ou il est vérifié par une autre organisation.`,
  ssoLead:
    "Choisissez votre fournisseur d'identité : le guide donne les valeurs exactes à y coller et demande ce qu'il vous rend.",
  chooseIdp: "Fournisseur d'identité",
  start: "Commencer",
  connections: "Connexions configurées avec ce lien",
  noConnections: "Aucune pour l'instant.",
  inactive: "Inactive : un propriétaire l'active après un test réussi",
  active: "Active",
  guideTitle: (idp: string) => `Connecter ${idp}`,
  inYourIdp: (idp: string) => `Dans ${idp}`,
  pasteThese: "Collez ces valeurs :",
  giveBack: "Puis indiquez ce qu'il vous affiche :",
  metadataUrl: "URL des métadonnées de l'IdP",
  metadataXml: "Ou le XML des métadonnées de l'IdP",
  issuer: "URL de l'émetteur (son document de découverte se trouve sous /.well-known/openid-configuration)",
  clientId: "Identifiant client",
  clientSecret: "Secret client",
  create: "Enregistrer la connexion",
  noDomainsYet:
    "Vérifiez d'abord un domaine : la connexion ne servira que les domaines vérifiés avec ce lien.",
  connectionTitle: (type: string) => `Connexion ${type}`,
  valuesToPaste: "Valeurs pour votre fournisseur d'identité",
  test: "Tester la connexion",
  testLead:
    "Connectez-vous chez votre fournisseur d'identité avec un compte d'un domaine vérifié. Personne n'est connecté ici : le test vérifie seulement la réponse.",
  testNone: "Pas encore testée.",
  testOk: (email: string) =>
    `Le test a réussi : votre fournisseur d'identité a garanti ${email}. Les propriétaires de l'organisation ont été prévenus qu'elle peut être activée.`,
  testFailed: (why: string) => `Le dernier test a échoué : ${why}`,
  testWhy: {
    "sso-email-outside-domains":
      "l'adresse qu'il a fournie n'appartient à aucun domaine vérifié avec ce lien.",
    "sso-assertion-invalid": "sa réponse n'a pas pu être vérifiée (signature, audience ou horodatage).",
    "invalid-state": "le test n'a pas été lancé dans ce navigateur, ou a pris trop de temps. Relancez-le.",
    other: "la réponse du fournisseur d'identité a été refusée.",
  },
  scimLead:
    "Votre fournisseur d'identité crée, met à jour et désactive vos utilisateurs ici. Un jeton créé sur cette page ne peut faire de personne un propriétaire ou un administrateur de l'organisation.",
  scimBaseUrl: "URL de base SCIM",
  scimToken: "Jeton Bearer",
  scimTokenOnce: "Copiez le jeton maintenant : il n'est affiché qu'une fois.",
  makeToken: "Créer un jeton SCIM",
  tokens: "Jetons créés avec ce lien",
  noTokens: "Aucun pour l'instant.",
  lastUsed: (date: string) => `Votre fournisseur d'identité a appelé pour la dernière fois le ${date}.`,
  neverUsed:
    "Votre fournisseur d'identité n'a pas encore appelé : lancez son test de connexion, puis revenez vérifier ici.",
  checkAgain: "Vérifier à nouveau",
  made: (date: string) => `Créé le ${date}`,
  readyMail: {
    subject: "Une connexion pour ${orgName} est prête à être activée",
    text: "Bonjour ${displayName},\n\nVotre administrateur informatique a configuré une connexion ${type} pour ${orgName} avec un lien de configuration, et son test a réussi (le fournisseur d'identité a garanti ${email}).\n\nElle reste désactivée jusqu'à ce qu'un propriétaire l'active. Connexion : ${connectionId}.\n${link}\n",
    html: "<p>Bonjour ${displayName},</p><p>Votre administrateur informatique a configuré une connexion ${type} pour <strong>${orgName}</strong> avec un lien de configuration, et son test a réussi (le fournisseur d'identité a garanti ${email}).</p><p>Elle reste désactivée jusqu'à ce qu'un propriétaire l'active. Connexion : ${connectionId}.</p><p><a href=\"${link}\">Ouvrir l'application</a></p>",
  },
};
