import type { SecondStepWords } from "../en/second-step";

/** The choice of second step in Portuguese (Brazil). */
export const secondStep: SecondStepWords = {
  title: "Segunda etapa",
  lead: "O que um acesso com a sua senha pede em seguida.",
  current: (name: string) => `Agora: ${name}.`,
  none: "nada (a sua senha basta para entrar)",
  totpFirst:
    "Enquanto a verificação em duas etapas estiver ativada, o seu aplicativo autenticador é a segunda etapa. Desative-a acima para escolher outra.",
  totp: "um código do seu aplicativo autenticador",
  email: (email: string) => `Um código enviado por e-mail para ${email}`,
  passkey: "A sua chave de acesso ou chave de segurança",
  sms: "Um código enviado por SMS para o seu telefone",
  off: "Nada depois da senha",
  save: "Salvar",
  emailUnverified: "O seu endereço de e-mail não está verificado e por isso não pode receber os códigos.",
  noPasskey: "Adicione primeiro uma chave de acesso para escolhê-la.",
  changed: "A sua segunda etapa foi alterada.",
  errors: {
    unverified:
      "Verifique primeiro o seu endereço de e-mail: um endereço não verificado não pode receber os códigos.",
    missing: "Você ainda não tem isso: adicione primeiro.",
  },
  pageEmailLead: "Digite o código que acabamos de enviar por e-mail. Ele é válido por cinco minutos.",
  pageSmsLead: "Digite o código que acabamos de enviar por SMS para o seu telefone.",
  pagePasskey: "A segunda etapa desta conta é uma chave de acesso: entre com a sua chave de acesso.",
};
