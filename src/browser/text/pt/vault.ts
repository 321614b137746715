import type { Vault } from "../en/vault";

/** The account center's connected accounts (the token vault) in Portuguese. */
export const vault: Vault = {
  title: "Contas conectadas",
  lead: "Contas de outros serviços que os aplicativos que você autorizou podem usar por você. As chaves ficam aqui: um aplicativo recebe delas apenas um acesso de curta duração.",
  none: "Nenhuma conta está conectada.",
  account: "Conta",
  apps: "Aplicativos autorizados",
  noApps: "Nenhum aplicativo autorizado ainda.",
  never: "nunca usado",
  lastUsed: (date, uses) => `usado pela última vez em ${date} (${uses}×)`,
};
