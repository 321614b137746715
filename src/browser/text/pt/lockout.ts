import type { Lockout } from "../en/lockout";

export const lockout: Lockout = {
  mail: {
    subject: "O acesso à sua conta está pausado",
    text: "Olá, ${displayName},\n\nHouve tentativas malsucedidas demais de entrar na sua conta com ${method}, por isso essa forma de entrar está pausada por ${duration}.\n\nSe foi você, abra este link para desbloquear agora:\n${link}\n\nSe não foi você, alguém pode estar tentando entrar na sua conta. Nada foi alterado. Escolha uma senha forte que você não use em nenhum outro lugar.\n",
    html: '<p>Olá, ${displayName},</p><p>Houve tentativas malsucedidas demais de entrar na sua conta com ${method}, por isso essa forma de entrar está pausada por ${duration}.</p><p>Se foi você, <a href="${link}">desbloqueie agora</a>.</p><p>Se não foi você, alguém pode estar tentando entrar na sua conta. Nada foi alterado. Escolha uma senha forte que você não use em nenhum outro lugar.</p>',
  },
  methods: {
    password: "sua senha",
    "email-otp": "um código enviado por e-mail",
    "sms-otp": "um código enviado por SMS",
    totp: "um código do seu aplicativo autenticador",
    "recovery-code": "um código de recuperação",
  },
  duration: {
    minutes: (count: number) => `${count} minutos`,
    hour: "1 hora",
    hours: (count: number) => `${count} horas`,
  },
  page: {
    title: "Desbloquear o acesso",
    lead: "Depois de tentativas malsucedidas demais, uma das formas de entrar na sua conta foi pausada. Se as tentativas foram suas, desbloqueie agora.",
    unlock: "Desbloquear",
    doneTitle: "O acesso foi desbloqueado",
    doneLead: "Você já pode entrar novamente.",
    toApp: "Continuar para o aplicativo",
    failedTitle: "Este link não funciona mais",
    failedLead:
      "Ele já foi usado ou tem mais de um dia. Se o acesso ainda estiver pausado, espere a pausa terminar.",
    incomplete: "Este link está incompleto. Abra-o exatamente como estava no e-mail.",
    otherSite: "Este formulário foi enviado de outro site, por isso nada foi alterado.",
    unavailable: "Não é possível desbloquear agora. Tente novamente em instantes.",
  },
};
