import type { Mails } from "../en/mails";

export const mails: Mails = {
  "email-verify": {
    subject: "Confirme seu e-mail",
    text: "Olá, ${displayName},\n\nUma conta foi criada com este endereço de e-mail. Se foi você, use este link para confirmar o endereço:\n${link}\n\nSe não foi você, não siga o link: outra pessoa escolheu este endereço e a senha dele. Ignore este e-mail, e a conta continuará inutilizável.\n",
    html: '<p>Olá, ${displayName},</p><p>Uma conta foi criada com este endereço de e-mail. Se foi você, <a href="${link}">confirme seu endereço de e-mail</a>.</p><p>Se não foi você, não siga o link: outra pessoa escolheu este endereço e a senha dele. Ignore este e-mail, e a conta continuará inutilizável.</p>',
  },
  "signin-passwordless": {
    subject: "Seu link de acesso",
    text: "Olá, ${displayName},\n\nUse este link para entrar:\n${link}\n\nEle é válido por uma hora.\n",
    html: '<p>Olá, ${displayName},</p><p><a href="${link}">Entrar</a></p><p>O link é válido por uma hora.</p>',
  },
  "signin-otp": {
    subject: "Seu código de acesso",
    text: "Olá, ${displayName},\n\nSeu código de acesso é ${code}. Ele é válido por dez minutos.\n",
    html: "<p>Olá, ${displayName},</p><p>Seu código de acesso é <strong>${code}</strong>. Ele é válido por dez minutos.</p>",
  },
  reauthentication: {
    subject: "Confirme que é você",
    text: "Olá ${displayName},\n\nPara confirmar que é você, introduza este código: ${code}. É válido durante cinco minutos.\n\nSe não o pediu, alguém pode estar a usar a sua conta: altere a sua palavra-passe.\n",
    html: "<p>Olá ${displayName},</p><p>Para confirmar que é você, introduza este código: <strong>${code}</strong>. É válido durante cinco minutos.</p><p>Se não o pediu, alguém pode estar a usar a sua conta: altere a sua palavra-passe.</p>",
  },
  "mfa-email": {
    subject: "Seu código da segunda etapa",
    text: "Olá ${displayName},\n\nUm acesso à sua conta aguarda a segunda etapa. Para concluí-lo, digite este código: ${code}. Ele é válido por cinco minutos.\n\nSe não foi você, não compartilhe o código com ninguém e altere sua senha.\n",
    html: "<p>Olá ${displayName},</p><p>Um acesso à sua conta aguarda a segunda etapa. Para concluí-lo, digite este código: <strong>${code}</strong>. Ele é válido por cinco minutos.</p><p>Se não foi você, não compartilhe o código com ninguém e altere sua senha.</p>",
  },
  "user-invitation": {
    subject: "Foi convidado",
    text: "Olá,\n\nFoi convidado a criar uma conta com ${email}. Siga esta ligação para aceitar:\n${link}\n\nA ligação é válida durante uma hora. Se não esperava este convite, ignore este e-mail.\n",
    html: '<p>Olá,</p><p>Foi convidado a criar uma conta com ${email}. <a href="${link}">Aceitar o convite</a>.</p><p>A ligação é válida durante uma hora. Se não esperava este convite, ignore este e-mail.</p>',
  },
  "password-reset": {
    subject: "Redefina sua senha",
    text: "Olá, ${displayName},\n\nUse este link para redefinir sua senha:\n${link}\n\nSe você não pediu isso, ignore este e-mail.\n",
    html: '<p>Olá, ${displayName},</p><p><a href="${link}">Redefinir sua senha</a></p><p>Se você não pediu isso, ignore este e-mail.</p>',
  },
  "email-confirm-change": {
    subject: "Confirme seu novo e-mail",
    text: "Olá, ${displayName},\n\nUse este link para que ${newEmail} passe a ser seu endereço de e-mail:\n${link}\n",
    html: '<p>Olá, ${displayName},</p><p><a href="${link}">Confirmar ${newEmail} como seu endereço de e-mail</a></p>',
  },
  "org-invitation": {
    subject: "Você foi convidado para ${orgName}",
    text: "Olá,\n\n${inviterName} convidou ${email} para participar de ${orgName} como ${role}. Entre ou cadastre-se com este endereço e depois aceite:\n${link}\n\nO convite é válido por sete dias. Se você não esperava por ele, ignore este e-mail.\n",
    html: '<p>Olá,</p><p>${inviterName} convidou ${email} para participar de <strong>${orgName}</strong> como ${role}. Entre ou cadastre-se com este endereço e depois <a href="${link}">aceite o convite</a>.</p><p>O convite é válido por sete dias. Se você não esperava por ele, ignore este e-mail.</p>',
  },
};
