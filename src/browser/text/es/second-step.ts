import type { SecondStepWords } from "../en/second-step";

/** The choice of second step in Spanish. */
export const secondStep: SecondStepWords = {
  title: "Segundo paso",
  lead: "Lo que pide a continuación un inicio de sesión con tu contraseña.",
  current: (name: string) => `Ahora: ${name}.`,
  none: "nada (tu contraseña basta para iniciar sesión)",
  totpFirst:
    "Mientras la verificación en dos pasos esté activada, tu aplicación de autenticación es el segundo paso. Desactívala arriba para elegir otro.",
  totp: "un código de tu aplicación de autenticación",
  email: (email: string) => `Un código enviado por correo a ${email}`,
  passkey: "Tu llave de acceso o llave de seguridad",
  sms: "Un código enviado por SMS a tu teléfono",
  off: "Nada después de la contraseña",
  save: "Guardar",
  emailUnverified: "Tu dirección de correo no está verificada, así que no puede recibir los códigos.",
  noPasskey: "Añade primero una llave de acceso para elegirla.",
  changed: "Se ha cambiado tu segundo paso.",
  errors: {
    unverified:
      "Verifica primero tu dirección de correo: una dirección sin verificar no puede recibir los códigos.",
    missing: "Todavía no lo tienes: añádelo primero.",
  },
  pageEmailLead: "Introduce el código que te acabamos de enviar por correo. Es válido durante cinco minutos.",
  pageSmsLead: "Introduce el código que acabamos de enviar por SMS a tu teléfono.",
  pagePasskey: "El segundo paso de esta cuenta es una llave de acceso: inicia sesión con tu llave de acceso.",
};
