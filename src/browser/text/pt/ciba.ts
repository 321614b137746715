import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} pede a sua aprovação",
    text: "Olá ${displayName},\n\n${clientName} pede que aprove um pedido.\n\nMensagem de ${clientName}: ${bindingMessage}\n\nAbra este link, inicie sessão e aprove ou recuse antes de ${time}:\n${link}\n\nAbrir o link não aprova nada. Se não esperava isto, recuse.\n",
    html: '<p>Olá ${displayName},</p><p>${clientName} pede que aprove um pedido.</p><p>Mensagem de ${clientName}: ${bindingMessage}</p><p><a href="${link}">Rever o pedido</a> (inicie sessão e depois aprove ou recuse) antes de ${time}.</p><p>Abrir o link não aprova nada. Se não esperava isto, recuse.</p>',
  },
  noMessage: "(sem mensagem)",
  messageFrom: (clientName: string) => `Mensagem de ${clientName}`,
  wantsApproval: "pede a sua aprovação, em nome de uma aplicação que usa",
  warning:
    "Aprove apenas se estiver a fazer isto agora e a mensagem for a mesma que a aplicação mostra. Se não esperava isto, recuse.",
  approvedTitle: "Pedido aprovado",
  approvedLead: "A aplicação foi avisada. Pode fechar esta página.",
  deniedTitle: "Pedido recusado",
  deniedLead: "A aplicação foi avisada da sua recusa. Pode fechar esta página.",
  otherAccountTitle: "Este pedido é para outra conta",
  otherAccountLead: "Inicie sessão com a conta para a qual o pedido foi enviado e abra o link novamente.",
  account: {
    title: "À sua espera",
    lead: "Aplicações que pediram a sua aprovação. Reveja cada uma; nada é aprovado sem si.",
    client: "Aplicação",
    message: "Mensagem",
    expires: "Expira",
    review: "Rever",
    none: "Nada está à espera da sua aprovação.",
  },
};
