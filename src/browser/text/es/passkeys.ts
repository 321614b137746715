import type { Passkeys } from "../en/passkeys";

export const passkeys: Passkeys = {
  mail: {
    subject: "Se añadió una llave de acceso a tu cuenta",
    text: "Hola ${displayName}:\n\nTu gestor de contraseñas creó una llave de acceso para tu cuenta después de que iniciaras sesión, a las ${time}. La próxima vez podrás iniciar sesión con ella en lugar de tu contraseña.\n\nSi no fuiste tú, elimina la llave de acceso y cambia tu contraseña:\n${link}\n",
    html: '<p>Hola ${displayName}:</p><p>Tu gestor de contraseñas creó una llave de acceso para tu cuenta después de que iniciaras sesión, a las ${time}. La próxima vez podrás iniciar sesión con ella en lugar de tu contraseña.</p><p>Si no fuiste tú, <a href="${link}">elimina la llave de acceso</a> y cambia tu contraseña.</p>',
  },
  signUp: "Registrarse con una llave de acceso",
  signUpProblem: "No se pudo crear la llave de acceso. Inténtalo de nuevo o regístrate con una contraseña.",
  signUpMailed:
    "Revisa tu correo: sigue el enlace que te enviamos para terminar el registro y luego inicia sesión con tu llave de acceso.",
};
