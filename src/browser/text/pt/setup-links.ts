import type { SetupLinks } from "../en/setup-links";

/** As páginas do link de configuração (contrato operators.md §5) e o e-mail aos proprietários da organização. */
export const setupLinks: SetupLinks = {
  title: (org: string) => `Configurar o login de ${org}`,
  lead: "Este link permite que você, como administrador de TI, conecte o provedor de identidade da sua organização. Nada do que você fizer aqui tem efeito até que um proprietário da organização o ative.",
  expires: (date: string) => `Este link funciona até ${date}.`,
  gone: "Este link de configuração não funciona: foi digitado errado, expirou ou foi revogado. Peça um novo a quem o enviou.",
  goneTitle: "Link de configuração inválido",
  tooMany: (seconds: number) =>
    `Tentativas demais a partir da sua rede. Tente novamente em ${seconds} segundos.`,
  notAllowed: "Este link de configuração não inclui esta etapa.",
  otherSite:
    "Este formulário foi enviado de outro site. Abra o link de configuração novamente e use o formulário da página dele.",
  back: "Voltar à visão geral",
  steps: "Etapas",
  stepDomains: "Verificar seus domínios de e-mail",
  stepSso: "Conectar o login único",
  stepScim: "Provisionar usuários com SCIM",
  done: "Concluído",
  todo: "A fazer",
  domainsLead:
    "Comprove que sua organização é dona de um domínio de e-mail adicionando um registro DNS TXT. O login único configurado aqui atende apenas os domínios verificados nesta página.",
  domainLabel: "Domínio de e-mail",
  addDomain: "Adicionar o domínio",
  txtName: "Nome do registro TXT",
  txtValue: "Valor do registro TXT",
  checkDomain: "Verificar o registro",
  verified: "Verificado",
  notVerified: "Ainda não verificado",
  domainChecked: (domain: string) => `${domain} está verificado.`,
  domainNotFound: (domain: string) =>
    `O registro TXT de ${domain} ainda não foi encontrado. Alterações de DNS podem levar alguns minutos; verifique novamente mais tarde.`,
  dnsUnavailable: "A consulta DNS não respondeu agora. Nada foi alterado: verifique novamente em um minuto.",
  domainVerifiedBefore: (domain: string) =>
    `${domain} já foi verificado para esta organização fora deste link. Um proprietário da organização decide se a sua conexão o atende.`,
  domainRefused: (domain: string) =>
    `${domain} não pode ser adicionado: é um domínio de e-mail público, não é um nome de domínio ou foi verificado por outra organização.`,
  ssoLead:
    "Escolha seu provedor de identidade: o guia mostra os valores exatos para colar nele e pede o que ele devolve.",
  chooseIdp: "Provedor de identidade",
  start: "Começar",
  connections: "Conexões configuradas por este link",
  noConnections: "Nenhuma ainda.",
  inactive: "Inativa: um proprietário a ativa após um teste bem-sucedido",
  active: "Ativa",
  guideTitle: (idp: string) => `Conectar ${idp}`,
  inYourIdp: (idp: string) => `No ${idp}`,
  pasteThese: "Cole estes valores:",
  giveBack: "Depois informe o que ele mostrar:",
  metadataUrl: "URL de metadados do IdP",
  metadataXml: "Ou o XML de metadados do IdP",
  issuer: "URL do emissor (o documento de descoberta fica abaixo dela em /.well-known/openid-configuration)",
  clientId: "ID do cliente",
  clientSecret: "Segredo do cliente",
  create: "Salvar a conexão",
  noDomainsYet:
    "Verifique primeiro um domínio: a conexão atenderá apenas os domínios verificados por este link.",
  connectionTitle: (type: string) => `Conexão ${type}`,
  valuesToPaste: "Valores para o seu provedor de identidade",
  test: "Testar a conexão",
  testLead:
    "Entre no seu provedor de identidade com uma conta de um domínio verificado. Ninguém é conectado aqui: o teste apenas verifica a resposta.",
  testNone: "Ainda não testada.",
  testOk: (email: string) =>
    `O teste funcionou: seu provedor de identidade confirmou ${email}. Os proprietários da organização foram avisados de que ela pode ser ativada.`,
  testFailed: (why: string) => `O último teste falhou: ${why}`,
  testWhy: {
    "sso-email-outside-domains": "o e-mail informado não está em um domínio verificado por este link.",
    "sso-assertion-invalid": "não foi possível verificar a resposta (assinatura, público ou horário).",
    "invalid-state": "o teste não foi iniciado neste navegador ou demorou demais. Inicie-o novamente.",
    other: "a resposta do provedor de identidade foi recusada.",
  },
  scimLead:
    "Seu provedor de identidade cria, atualiza e desativa seus usuários aqui. Um token criado nesta página não pode tornar ninguém proprietário ou administrador da organização.",
  scimBaseUrl: "URL base do SCIM",
  scimToken: "Token Bearer",
  scimTokenOnce: "Copie o token agora: ele é mostrado apenas uma vez.",
  makeToken: "Criar um token SCIM",
  tokens: "Tokens criados por este link",
  noTokens: "Nenhum ainda.",
  lastUsed: (date: string) => `Seu provedor de identidade chamou pela última vez em ${date}.`,
  neverUsed:
    "Seu provedor de identidade ainda não chamou: execute o teste de conexão dele e depois verifique aqui.",
  checkAgain: "Verificar novamente",
  made: (date: string) => `Criado em ${date}`,
  readyMail: {
    subject: "Uma conexão de login para ${orgName} está pronta para ser ativada",
    text: "Olá, ${displayName},\n\nSeu administrador de TI configurou uma conexão ${type} para ${orgName} por um link de configuração, e o teste dela funcionou (o provedor de identidade confirmou ${email}).\n\nEla continua desativada até que um proprietário a ative. Conexão: ${connectionId}.\n${link}\n",
    html: '<p>Olá, ${displayName},</p><p>Seu administrador de TI configurou uma conexão ${type} para <strong>${orgName}</strong> por um link de configuração, e o teste dela funcionou (o provedor de identidade confirmou ${email}).</p><p>Ela continua desativada até que um proprietário a ative. Conexão: ${connectionId}.</p><p><a href="${link}">Abrir o aplicativo</a></p>',
  },
};
