import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "Nuevo inicio de sesión en tu cuenta",
    text: "Hola, ${displayName}:\n\nSe inició sesión en tu cuenta desde un dispositivo nuevo: ${device}, ${place}, el ${time}.${risk}\n\nSi fuiste tú, no tienes que hacer nada. Si no, cierra esa sesión y cambia tu contraseña:\n${link}\n",
    html: '<p>Hola, ${displayName}:</p><p>Se inició sesión en tu cuenta desde un dispositivo nuevo: ${device}, ${place}, el ${time}.${risk}</p><p>Si fuiste tú, no tienes que hacer nada. Si no, <a href="${link}">cierra esa sesión</a> y cambia tu contraseña.</p>',
  },
  device: (browser: string, system: string) => `${browser} en ${system}`,
  unknownBrowser: "un navegador desconocido",
  risk: {
    low: " Evaluamos el riesgo de este inicio de sesión como bajo.",
    medium: " Evaluamos el riesgo de este inicio de sesión como medio.",
    high: " Evaluamos el riesgo de este inicio de sesión como alto.",
  },
  unknownPlace: "un lugar desconocido",
};
