import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  signInLead: (name: string) => `Entre para continuar em ${name}.`,
  signUpLead: (name: string) => `Crie sua conta para continuar em ${name}.`,
  accountSignInLead: "Entre para gerenciar sua conta.",
  accountSignUpLead: "Crie sua conta. Depois você poderá gerenciá-la aqui.",
  redirectNotAllowed:
    "Este link de acesso não pode ser usado: o endereço de retorno não é um para o qual este serviço possa enviar você. Volte ao aplicativo e tente novamente.",
  promptNotSupported: "Este link de acesso não é válido: o único “prompt” aceito é “login”.",
  completedAlready:
    "Este acesso já foi concluído. Volte ao aplicativo; se você não estiver conectado lá, entre novamente a partir dele.",
};
