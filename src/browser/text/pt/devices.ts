import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "Novo acesso à sua conta",
    text: "Olá, ${displayName},\n\nSua conta foi acessada a partir de um novo dispositivo: ${device}, ${place}, em ${time}.${risk}\n\nSe foi você, não é preciso fazer nada. Se não foi, encerre essa sessão e altere sua senha:\n${link}\n",
    html: '<p>Olá, ${displayName},</p><p>Sua conta foi acessada a partir de um novo dispositivo: ${device}, ${place}, em ${time}.${risk}</p><p>Se foi você, não é preciso fazer nada. Se não foi, <a href="${link}">encerre essa sessão</a> e altere sua senha.</p>',
  },
  device: (browser: string, system: string) => `${browser} no ${system}`,
  unknownBrowser: "um navegador desconhecido",
  risk: {
    low: " Avaliamos o risco deste acesso como baixo.",
    medium: " Avaliamos o risco deste acesso como médio.",
    high: " Avaliamos o risco deste acesso como alto.",
  },
  unknownPlace: "um local desconhecido",
};
