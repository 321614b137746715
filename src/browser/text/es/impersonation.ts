import type { Impersonation } from "../en/impersonation";

export const impersonation: Impersonation = {
  banner: (actor: string) =>
    `${actor} está actuando como este usuario (suplantación). Aquí no se puede conceder ni cambiar nada.`,
  readOnly:
    "Solo lectura: mientras el soporte actúa como este usuario, los ajustes de la cuenta se pueden ver pero no cambiar; el usuario los cambia en su propia sesión.",
  sessionLabel: (actor: string) => `Suplantado por ${actor}`,
  mail: {
    subject: "Alguien de soporte actuó en su nombre",
    text: "Hola ${displayName}:\n\n${actor} actuó en su nombre desde ${start} hasta ${end}, por este motivo: ${reason}\n\nDurante ese tiempo no se pudo conceder ni cambiar nada en su cuenta. Sus sesiones aparecen aquí:\n${link}\n",
    html: '<p>Hola ${displayName}:</p><p>${actor} actuó en su nombre desde ${start} hasta ${end}, por este motivo: ${reason}</p><p>Durante ese tiempo no se pudo conceder ni cambiar nada en su cuenta. <a href="${link}">Ver sus sesiones</a>.</p>',
  },
};
