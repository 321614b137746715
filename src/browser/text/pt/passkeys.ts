import type { Passkeys } from "../en/passkeys";

export const passkeys: Passkeys = {
  mail: {
    subject: "Uma chave de acesso foi adicionada à sua conta",
    text: "Olá ${displayName},\n\nSeu gerenciador de senhas criou uma chave de acesso para sua conta depois que você entrou, às ${time}. Da próxima vez, você pode entrar com ela em vez da sua senha.\n\nSe não foi você, remova a chave de acesso e altere sua senha:\n${link}\n",
    html: '<p>Olá ${displayName},</p><p>Seu gerenciador de senhas criou uma chave de acesso para sua conta depois que você entrou, às ${time}. Da próxima vez, você pode entrar com ela em vez da sua senha.</p><p>Se não foi você, <a href="${link}">remova a chave de acesso</a> e altere sua senha.</p>',
  },
  signUp: "Cadastrar-se com uma chave de acesso",
  signUpProblem: "Não foi possível criar a chave de acesso. Tente de novo ou cadastre-se com uma senha.",
  signUpMailed:
    "Verifique seu e-mail: siga o link que enviamos para concluir o cadastro e depois entre com sua chave de acesso.",
};
