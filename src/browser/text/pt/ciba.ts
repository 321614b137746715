import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} pede sua aprovação",
    text: "Olá ${displayName},\n\n${clientName} pede que você aprove uma solicitação.\n\nMensagem de ${clientName}: ${bindingMessage}\n\nAbra este link, entre na sua conta e aprove ou recuse antes de ${time}:\n${link}\n\nAbrir o link não aprova nada. Se você não esperava isto, recuse.\n",
    html: '<p>Olá ${displayName},</p><p>${clientName} pede que você aprove uma solicitação.</p><p>Mensagem de ${clientName}: ${bindingMessage}</p><p><a href="${link}">Revisar a solicitação</a> (entre na sua conta e depois aprove ou recuse) antes de ${time}.</p><p>Abrir o link não aprova nada. Se você não esperava isto, recuse.</p>',
  },
  noMessage: "(sem mensagem)",
  messageFrom: (clientName: string) => `Mensagem de ${clientName}`,
  wantsApproval: "pede sua aprovação, em nome de um aplicativo que você usa",
  warning:
    "Aprove somente se você estiver fazendo isto agora e a mensagem for a mesma que o aplicativo mostra. Se você não esperava isto, recuse.",
  approvedTitle: "Solicitação aprovada",
  approvedLead: "O aplicativo foi avisado. Você pode fechar esta página.",
  deniedTitle: "Solicitação recusada",
  deniedLead: "O aplicativo foi avisado da sua recusa. Você pode fechar esta página.",
  otherAccountTitle: "Esta solicitação é para outra conta",
  otherAccountLead: "Entre com a conta para a qual a solicitação foi enviada e abra o link novamente.",
  account: {
    title: "Esperando por você",
    lead: "Aplicativos que pediram sua aprovação. Revise cada um; nada é aprovado sem você.",
    client: "Aplicativo",
    message: "Mensagem",
    expires: "Expira",
    review: "Revisar",
    none: "Nada está esperando sua aprovação.",
  },
};
