import type { SetupLinks } from "../en/setup-links";

/** Las páginas del enlace de configuración (contrato operators.md §5) y el correo a los propietarios de la organización. */
export const setupLinks: SetupLinks = {
  title: (org: string) => `Configurar el inicio de sesión de ${org}`,
  lead: "Este enlace le permite, como administrador de TI, conectar el proveedor de identidad de su organización. Nada de lo que haga aquí tiene efecto hasta que un propietario de la organización lo active.",
  expires: (date: string) => `Este enlace funciona hasta el ${date}.`,
  gone: "Este enlace de configuración no funciona: está mal escrito, caducado o revocado. Pida uno nuevo a quien se lo envió.",
  goneTitle: "Enlace de configuración no válido",
  tooMany: (seconds: number) =>
    `Demasiados intentos desde su red. Vuelva a intentarlo en ${seconds} segundos.`,
  notAllowed: "Este enlace de configuración no incluye este paso.",
  otherSite:
    "Este formulario se envió desde otro sitio. Abra de nuevo el enlace de configuración y use el formulario de su página.",
  back: "Volver al resumen",
  steps: "Pasos",
  stepDomains: "Verificar sus dominios de correo",
  stepSso: "Conectar el inicio de sesión único",
  stepScim: "Aprovisionar usuarios con SCIM",
  done: "Hecho",
  todo: "Pendiente",
  domainsLead:
    "Demuestre que su organización es dueña de un dominio de correo añadiendo un registro DNS TXT. El inicio de sesión único configurado aquí solo sirve a los dominios verificados en esta página.",
  domainLabel: "Dominio de correo",
  addDomain: "Añadir el dominio",
  txtName: "Nombre del registro TXT",
  txtValue: "Valor del registro TXT",
  checkDomain: "Comprobar el registro",
  verified: "Verificado",
  notVerified: "Aún no verificado",
  domainChecked: (domain: string) => `${domain} está verificado.`,
  domainNotFound: (domain: string) =>
    `Todavía no se encuentra el registro TXT de ${domain}. Los cambios de DNS pueden tardar unos minutos; vuelva a comprobarlo más tarde.`,
  dnsUnavailable:
    "La consulta DNS no respondió en este momento. No se cambió nada: vuelva a comprobarlo en un minuto.",
  domainVerifiedBefore: (domain: string) =>
    `${domain} ya estaba verificado para esta organización fuera de este enlace. Un propietario de la organización decide si su conexión lo atiende.`,
  domainRefused: (domain: string) =>
    `No se puede añadir ${domain}: es un dominio de correo público, no es un nombre de dominio o lo verificó otra organización.`,
  ssoLead:
    "Elija su proveedor de identidad: la guía da los valores exactos que debe pegar en él y le pide lo que le devuelve.",
  chooseIdp: "Proveedor de identidad",
  start: "Empezar",
  connections: "Conexiones configuradas con este enlace",
  noConnections: "Ninguna todavía.",
  inactive: "Inactiva: un propietario la activa tras una prueba correcta",
  active: "Activa",
  guideTitle: (idp: string) => `Conectar ${idp}`,
  inYourIdp: (idp: string) => `En ${idp}`,
  pasteThese: "Pegue estos valores:",
  giveBack: "Después indique lo que le muestra:",
  metadataUrl: "URL de metadatos del IdP",
  metadataXml: "O el XML de metadatos del IdP",
  issuer:
    "URL del emisor (su documento de descubrimiento está bajo ella en /.well-known/openid-configuration)",
  clientId: "ID de cliente",
  clientSecret: "Secreto de cliente",
  create: "Guardar la conexión",
  noDomainsYet:
    "Verifique primero un dominio: la conexión solo servirá a los dominios verificados con este enlace.",
  connectionTitle: (type: string) => `Conexión ${type}`,
  valuesToPaste: "Valores para su proveedor de identidad",
  test: "Probar la conexión",
  testLead:
    "Inicie sesión en su proveedor de identidad con una cuenta de un dominio verificado. Aquí no se inicia la sesión de nadie: la prueba solo comprueba la respuesta.",
  testNone: "Aún no probada.",
  testOk: (email: string) =>
    `La prueba fue correcta: su proveedor de identidad avaló a ${email}. Se avisó a los propietarios de la organización de que puede activarse.`,
  testFailed: (why: string) => `La última prueba falló: ${why}`,
  testWhy: {
    "sso-email-outside-domains": "el correo que indicó no está en un dominio verificado con este enlace.",
    "sso-assertion-invalid": "no se pudo verificar su respuesta (firma, audiencia u hora).",
    "invalid-state": "la prueba no se inició en este navegador o tardó demasiado. Iníciela de nuevo.",
    other: "se rechazó la respuesta del proveedor de identidad.",
  },
  scimLead:
    "Su proveedor de identidad crea, actualiza y desactiva aquí a sus usuarios. Un token creado en esta página no puede hacer a nadie propietario ni administrador de la organización.",
  scimBaseUrl: "URL base de SCIM",
  scimToken: "Token Bearer",
  scimTokenOnce: "Copie el token ahora: solo se muestra una vez.",
  makeToken: "Crear un token SCIM",
  tokens: "Tokens creados con este enlace",
  noTokens: "Ninguno todavía.",
  lastUsed: (date: string) => `Su proveedor de identidad llamó por última vez el ${date}.`,
  neverUsed:
    "Su proveedor de identidad aún no ha llamado: ejecute su prueba de conexión y vuelva a comprobarlo aquí.",
  checkAgain: "Comprobar de nuevo",
  made: (date: string) => `Creado el ${date}`,
  readyMail: {
    subject: "Una conexión de inicio de sesión para ${orgName} está lista para activarse",
    text: "Hola, ${displayName}:\n\nSu administrador de TI configuró una conexión ${type} para ${orgName} con un enlace de configuración, y su prueba fue correcta (el proveedor de identidad avaló a ${email}).\n\nSigue desactivada hasta que un propietario la active. Conexión: ${connectionId}.\n${link}\n",
    html: '<p>Hola, ${displayName}:</p><p>Su administrador de TI configuró una conexión ${type} para <strong>${orgName}</strong> con un enlace de configuración, y su prueba fue correcta (el proveedor de identidad avaló a ${email}).</p><p>Sigue desactivada hasta que un propietario la active. Conexión: ${connectionId}.</p><p><a href="${link}">Abrir la aplicación</a></p>',
  },
};
