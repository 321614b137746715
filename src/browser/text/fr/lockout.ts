import type { Lockout } from "../en/lockout";

export const lockout: Lockout = {
  mail: {
    subject: "La connexion à votre compte est suspendue",
    text: "Bonjour ${displayName},\n\nIl y a eu trop de tentatives de connexion infructueuses à votre compte avec ${method}. Ce mode de connexion est donc suspendu pendant ${duration}.\n\nSi c'était vous, ouvrez ce lien pour le débloquer dès maintenant :\n${link}\n\nSi ce n'était pas vous, quelqu'un essaie peut-être d'accéder à votre compte. Rien n'a été modifié. Choisissez un mot de passe robuste que vous n'utilisez nulle part ailleurs.\n",
    html: "<p>Bonjour ${displayName},</p><p>Il y a eu trop de tentatives de connexion infructueuses à votre compte avec ${method}. Ce mode de connexion est donc suspendu pendant ${duration}.</p><p>Si c'était vous, <a href=\"${link}\">débloquez-le dès maintenant</a>.</p><p>Si ce n'était pas vous, quelqu'un essaie peut-être d'accéder à votre compte. Rien n'a été modifié. Choisissez un mot de passe robuste que vous n'utilisez nulle part ailleurs.</p>",
  },
  methods: {
    password: "votre mot de passe",
    "email-otp": "un code reçu par e-mail",
    "sms-otp": "un code reçu par SMS",
    totp: "un code de votre application d'authentification",
    "recovery-code": "un code de récupération",
  },
  duration: {
    minutes: (count: number) => `${count} minutes`,
    hour: "1 heure",
    hours: (count: number) => `${count} heures`,
  },
  page: {
    title: "Débloquer la connexion",
    lead: "Après trop de tentatives infructueuses, la connexion à votre compte avec l'un des modes de connexion a été suspendue. Si ces tentatives venaient de vous, débloquez-la maintenant.",
    unlock: "Débloquer",
    doneTitle: "La connexion est débloquée",
    doneLead: "Vous pouvez de nouveau vous connecter.",
    toApp: "Continuer vers l'application",
    failedTitle: "Ce lien ne fonctionne plus",
    failedLead:
      "Il a déjà été utilisé, ou il date de plus d'un jour. Si la connexion est encore suspendue, attendez la fin de la suspension.",
    incomplete: "Ce lien est incomplet. Ouvrez-le exactement tel qu'il figurait dans l'e-mail.",
    otherSite: "Ce formulaire a été envoyé depuis un autre site : rien n'a été modifié.",
    unavailable: "Le déblocage est impossible pour le moment. Réessayez dans un instant.",
  },
};
