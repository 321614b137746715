/**
 * The text of the sign-in code SMS (`signin-passwordless-sms`, contract §8) per locale. `${code}` is the code. A
 * locale without a text falls back to the default locale, then to English.
 */
const TEXTS: Record<string, string> = {
  en: "Your sign-in code is ${code}. It is valid for 5 minutes.",
  fr: "Votre code de connexion est ${code}. Il est valable 5 minutes.",
  de: "Ihr Anmeldecode lautet ${code}. Er ist 5 Minuten gültig.",
  es: "Tu código de inicio de sesión es ${code}. Es válido durante 5 minutos.",
  pt: "Seu código de acesso é ${code}. Ele é válido por 5 minutos.",
  ja: "ログイン用コードは ${code} です。有効期限は5分です。",
};

export function smsCodeText(locale: string, defaultLocale: string, code: string): string {
  const text = TEXTS[locale] ?? TEXTS[defaultLocale] ?? TEXTS.en!;
  return text.replace("${code}", code);
}
