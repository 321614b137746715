import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} demande votre accord",
    text: "Bonjour ${displayName},\n\n${clientName} vous demande d'approuver une demande.\n\nMessage de ${clientName} : ${bindingMessage}\n\nOuvrez ce lien, connectez-vous, puis approuvez ou refusez avant ${time} :\n${link}\n\nOuvrir le lien n'approuve rien. Si vous ne vous y attendiez pas, refusez.\n",
    html: "<p>Bonjour ${displayName},</p><p>${clientName} vous demande d'approuver une demande.</p><p>Message de ${clientName} : ${bindingMessage}</p><p><a href=\"${link}\">Examiner la demande</a> (connectez-vous, puis approuvez ou refusez) avant ${time}.</p><p>Ouvrir le lien n'approuve rien. Si vous ne vous y attendiez pas, refusez.</p>",
  },
  noMessage: "(aucun message)",
  messageFrom: (clientName: string) => `Message de ${clientName}`,
  wantsApproval: "demande votre accord, pour le compte d'une application que vous utilisez",
  warning:
    "N'approuvez que si vous êtes en train de le faire et que le message correspond à celui de l'application. Si vous ne vous y attendiez pas, refusez.",
  approvedTitle: "Demande approuvée",
  approvedLead: "L'application a été prévenue. Vous pouvez fermer cette page.",
  deniedTitle: "Demande refusée",
  deniedLead: "L'application a été prévenue de votre refus. Vous pouvez fermer cette page.",
  otherAccountTitle: "Cette demande concerne un autre compte",
  otherAccountLead: "Connectez-vous avec le compte auquel la demande a été envoyée, puis rouvrez le lien.",
  account: {
    title: "En attente de votre accord",
    lead: "Les applications qui ont demandé votre accord. Examinez chacune ; rien n'est approuvé sans vous.",
    client: "Application",
    message: "Message",
    expires: "Expire",
    review: "Examiner",
    none: "Rien n'attend votre accord.",
  },
};
