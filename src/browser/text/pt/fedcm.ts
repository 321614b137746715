import type { Fedcm } from "../en/fedcm";

export const fedcm: Fedcm = {
  signedInTitle: "Você está conectado",
  closesItself:
    "Esta janela se fecha sozinha. Se continuar aberta, feche-a e volte ao site que pediu para você entrar.",
};
