import type { Impersonation } from "../en/impersonation";

export const impersonation: Impersonation = {
  banner: (actor: string) =>
    `${actor} está agindo como este usuário (personificação). Nada pode ser concedido ou alterado aqui.`,
  readOnly:
    "Somente leitura: enquanto o suporte age como este usuário, as configurações da conta podem ser vistas, mas não alteradas; o usuário as altera na própria sessão.",
  sessionLabel: (actor: string) => `Personificado por ${actor}`,
  mail: {
    subject: "Alguém do suporte agiu em seu nome",
    text: "Olá ${displayName},\n\n${actor} agiu em seu nome de ${start} a ${end}, por este motivo: ${reason}\n\nNada pôde ser concedido ou alterado na sua conta durante esse tempo. Suas sessões estão listadas aqui:\n${link}\n",
    html: '<p>Olá ${displayName},</p><p>${actor} agiu em seu nome de ${start} a ${end}, por este motivo: ${reason}</p><p>Nada pôde ser concedido ou alterado na sua conta durante esse tempo. <a href="${link}">Ver suas sessões</a>.</p>',
  },
};
