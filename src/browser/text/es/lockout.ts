import type { Lockout } from "../en/lockout";

export const lockout: Lockout = {
  mail: {
    subject: "El inicio de sesión en tu cuenta está en pausa",
    text: "Hola, ${displayName}:\n\nHubo demasiados intentos fallidos de iniciar sesión en tu cuenta con ${method}, así que esa forma de iniciar sesión está en pausa durante ${duration}.\n\nSi fuiste tú, abre este enlace para desbloquearla ahora:\n${link}\n\nSi no fuiste tú, es posible que alguien esté intentando entrar en tu cuenta. No se ha cambiado nada. Elige una contraseña segura que no uses en ningún otro sitio.\n",
    html: '<p>Hola, ${displayName}:</p><p>Hubo demasiados intentos fallidos de iniciar sesión en tu cuenta con ${method}, así que esa forma de iniciar sesión está en pausa durante ${duration}.</p><p>Si fuiste tú, <a href="${link}">desbloquéala ahora</a>.</p><p>Si no fuiste tú, es posible que alguien esté intentando entrar en tu cuenta. No se ha cambiado nada. Elige una contraseña segura que no uses en ningún otro sitio.</p>',
  },
  methods: {
    password: "tu contraseña",
    "email-otp": "un código enviado por correo electrónico",
    "sms-otp": "un código enviado por SMS",
    totp: "un código de tu aplicación de autenticación",
    "recovery-code": "un código de recuperación",
  },
  duration: {
    minutes: (count: number) => `${count} minutos`,
    hour: "1 hora",
    hours: (count: number) => `${count} horas`,
  },
  page: {
    title: "Desbloquear el inicio de sesión",
    lead: "Tras demasiados intentos fallidos, se puso en pausa una de las formas de iniciar sesión en tu cuenta. Si los intentos fueron tuyos, desbloquéala ahora.",
    unlock: "Desbloquear",
    doneTitle: "El inicio de sesión está desbloqueado",
    doneLead: "Ya puedes volver a iniciar sesión.",
    toApp: "Ir a la aplicación",
    failedTitle: "Este enlace ya no funciona",
    failedLead:
      "Ya se usó o tiene más de un día. Si el inicio de sesión sigue en pausa, espera a que termine la pausa.",
    incomplete: "Este enlace está incompleto. Ábrelo tal como aparecía en el correo.",
    otherSite: "Este formulario se envió desde otro sitio, así que no se ha cambiado nada.",
    unavailable: "Ahora mismo no es posible desbloquear. Vuelve a intentarlo en un momento.",
  },
};
