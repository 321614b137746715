import type { Mails } from "../en/mails";

export const mails: Mails = {
  "email-verify": {
    subject: "Verifica tu correo electrónico",
    text: "Hola, ${displayName}:\n\nSe creó una cuenta con esta dirección de correo. Si fuiste tú, usa este enlace para verificar la dirección:\n${link}\n\nSi no la creaste, no sigas el enlace: otra persona eligió esta dirección y su contraseña. Ignora este correo y la cuenta seguirá sin poder usarse.\n",
    html: '<p>Hola, ${displayName}:</p><p>Se creó una cuenta con esta dirección de correo. Si fuiste tú, <a href="${link}">verifica tu dirección de correo</a>.</p><p>Si no la creaste, no sigas el enlace: otra persona eligió esta dirección y su contraseña. Ignora este correo y la cuenta seguirá sin poder usarse.</p>',
  },
  "signin-passwordless": {
    subject: "Tu enlace de inicio de sesión",
    text: "Hola, ${displayName}:\n\nUsa este enlace para iniciar sesión:\n${link}\n\nEs válido durante una hora.\n",
    html: '<p>Hola, ${displayName}:</p><p><a href="${link}">Iniciar sesión</a></p><p>El enlace es válido durante una hora.</p>',
  },
  "signin-otp": {
    subject: "Tu código de inicio de sesión",
    text: "Hola, ${displayName}:\n\nTu código de inicio de sesión es ${code}. Es válido durante diez minutos.\n",
    html: "<p>Hola, ${displayName}:</p><p>Tu código de inicio de sesión es <strong>${code}</strong>. Es válido durante diez minutos.</p>",
  },
  reauthentication: {
    subject: "Confirma que eres tú",
    text: "Hola ${displayName},\n\nPara confirmar que eres tú, introduce este código: ${code}. Es válido durante cinco minutos.\n\nSi no lo has pedido, puede que alguien esté usando tu cuenta: cambia tu contraseña.\n",
    html: "<p>Hola ${displayName},</p><p>Para confirmar que eres tú, introduce este código: <strong>${code}</strong>. Es válido durante cinco minutos.</p><p>Si no lo has pedido, puede que alguien esté usando tu cuenta: cambia tu contraseña.</p>",
  },
  "mfa-email": {
    subject: "Tu código del segundo paso",
    text: "Hola ${displayName}:\n\nUn inicio de sesión en tu cuenta espera su segundo paso. Para terminarlo, introduce este código: ${code}. Es válido durante cinco minutos.\n\nSi no has sido tú, no compartas el código con nadie y cambia tu contraseña.\n",
    html: "<p>Hola ${displayName}:</p><p>Un inicio de sesión en tu cuenta espera su segundo paso. Para terminarlo, introduce este código: <strong>${code}</strong>. Es válido durante cinco minutos.</p><p>Si no has sido tú, no compartas el código con nadie y cambia tu contraseña.</p>",
  },
  "user-invitation": {
    subject: "Te han invitado",
    text: "Hola,\n\nTe han invitado a crear una cuenta con ${email}. Sigue este enlace para aceptar:\n${link}\n\nEl enlace es válido durante una hora. Si no esperabas esta invitación, ignora este correo.\n",
    html: '<p>Hola,</p><p>Te han invitado a crear una cuenta con ${email}. <a href="${link}">Acepta la invitación</a>.</p><p>El enlace es válido durante una hora. Si no esperabas esta invitación, ignora este correo.</p>',
  },
  "password-reset": {
    subject: "Restablece tu contraseña",
    text: "Hola, ${displayName}:\n\nUsa este enlace para restablecer tu contraseña:\n${link}\n\nSi no lo pediste, ignora este correo.\n",
    html: '<p>Hola, ${displayName}:</p><p><a href="${link}">Restablecer tu contraseña</a></p><p>Si no lo pediste, ignora este correo.</p>',
  },
  "email-confirm-change": {
    subject: "Confirma tu nuevo correo electrónico",
    text: "Hola, ${displayName}:\n\nUsa este enlace para que ${newEmail} sea tu dirección de correo:\n${link}\n",
    html: '<p>Hola, ${displayName}:</p><p><a href="${link}">Confirmar ${newEmail} como tu dirección de correo</a></p>',
  },
  "org-invitation": {
    subject: "Te invitan a ${orgName}",
    text: "Hola:\n\n${inviterName} invitó a ${email} a unirse a ${orgName} como ${role}. Inicia sesión o regístrate con esta dirección y después acepta:\n${link}\n\nLa invitación es válida durante siete días. Si no la esperabas, ignora este correo.\n",
    html: '<p>Hola:</p><p>${inviterName} invitó a ${email} a unirse a <strong>${orgName}</strong> como ${role}. Inicia sesión o regístrate con esta dirección y después <a href="${link}">acepta la invitación</a>.</p><p>La invitación es válida durante siete días. Si no la esperabas, ignora este correo.</p>',
  },
};
