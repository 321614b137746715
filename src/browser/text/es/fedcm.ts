import type { Fedcm } from "../en/fedcm";

export const fedcm: Fedcm = {
  signedInTitle: "Has iniciado sesión",
  closesItself:
    "Esta ventana se cierra sola. Si sigue abierta, ciérrala y vuelve al sitio que te pidió iniciar sesión.",
};
