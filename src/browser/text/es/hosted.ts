import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  signInLead: (name: string) => `Inicia sesión para continuar en ${name}.`,
  signUpLead: (name: string) => `Crea tu cuenta para continuar en ${name}.`,
  accountSignInLead: "Inicia sesión para gestionar tu cuenta.",
  accountSignUpLead: "Crea tu cuenta. Después podrás gestionarla aquí.",
  redirectNotAllowed:
    "Este enlace de inicio de sesión no se puede usar: la dirección a la que volver después no es una a la que este servicio pueda enviarte. Vuelve a la aplicación e inténtalo de nuevo.",
  promptNotSupported: "Este enlace de inicio de sesión no es válido: el único «prompt» admitido es «login».",
  completedAlready:
    "Este inicio de sesión ya se completó. Vuelve a la aplicación; si allí no has iniciado sesión, vuelve a iniciarla desde ella.",
};
