import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  signInLead: (name: string) => `${name} を利用するにはログインしてください。`,
  signUpLead: (name: string) => `${name} を利用するにはアカウントを作成してください。`,
  accountSignInLead: "アカウントを管理するにはログインしてください。",
  accountSignUpLead: "アカウントを作成してください。作成後はこちらで管理できます。",
  redirectNotAllowed:
    "このログインリンクは使用できません。ログイン後の戻り先が、このサービスで許可されたアドレスではありません。アプリに戻って、もう一度お試しください。",
  promptNotSupported: "このログインリンクは無効です。prompt に指定できるのは「login」だけです。",
  completedAlready:
    "このログインはすでに完了しています。アプリに戻ってください。アプリでログインしていない場合は、アプリからもう一度ログインしてください。",
};
