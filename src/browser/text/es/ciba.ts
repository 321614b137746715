import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} pide tu aprobación",
    text: "Hola ${displayName}:\n\n${clientName} te pide que apruebes una solicitud.\n\nMensaje de ${clientName}: ${bindingMessage}\n\nAbre este enlace, inicia sesión y apruébala o recházala antes de ${time}:\n${link}\n\nAbrir el enlace no aprueba nada. Si no lo esperabas, recházala.\n",
    html: '<p>Hola ${displayName}:</p><p>${clientName} te pide que apruebes una solicitud.</p><p>Mensaje de ${clientName}: ${bindingMessage}</p><p><a href="${link}">Revisar la solicitud</a> (inicia sesión y luego apruébala o recházala) antes de ${time}.</p><p>Abrir el enlace no aprueba nada. Si no lo esperabas, recházala.</p>',
  },
  noMessage: "(sin mensaje)",
  messageFrom: (clientName: string) => `Mensaje de ${clientName}`,
  wantsApproval: "pide tu aprobación, en nombre de una aplicación que usas",
  warning:
    "Aprueba solo si lo estás haciendo ahora mismo y el mensaje coincide con el que muestra la aplicación. Si no lo esperabas, recházala.",
  approvedTitle: "Solicitud aprobada",
  approvedLead: "Se ha avisado a la aplicación. Puedes cerrar esta página.",
  deniedTitle: "Solicitud rechazada",
  deniedLead: "Se ha avisado a la aplicación de tu rechazo. Puedes cerrar esta página.",
  otherAccountTitle: "Esta solicitud es para otra cuenta",
  otherAccountLead: "Inicia sesión con la cuenta a la que se envió la solicitud y vuelve a abrir el enlace.",
  account: {
    title: "Esperando tu respuesta",
    lead: "Aplicaciones que pidieron tu aprobación. Revisa cada una; nada se aprueba hasta que lo digas.",
    client: "Aplicación",
    message: "Mensaje",
    expires: "Caduca",
    review: "Revisar",
    none: "Nada espera tu aprobación.",
  },
};
