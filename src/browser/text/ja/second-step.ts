import type { SecondStepWords } from "../en/second-step";

/** The choice of second step in Japanese. */
export const secondStep: SecondStepWords = {
  title: "2段階目の確認",
  lead: "パスワードでのログインの後に求められる確認です。",
  current: (name: string) => `現在: ${name}。`,
  none: "なし（パスワードだけでログインできます）",
  totpFirst:
    "2段階認証がオンの間は、認証アプリが2段階目の確認です。別の方法を選ぶには、上でオフにしてください。",
  totp: "認証アプリのコード",
  email: (email: string) => `${email} にメールで届くコード`,
  passkey: "パスキーまたはセキュリティキー",
  sms: "電話にSMSで届くコード",
  off: "パスワードの後は何もしない",
  save: "保存",
  emailUnverified: "メールアドレスが確認されていないため、コードを受け取れません。",
  noPasskey: "選ぶには、先にパスキーを追加してください。",
  changed: "2段階目の確認を変更しました。",
  errors: {
    unverified: "先にメールアドレスを確認してください。確認されていないアドレスにはコードを送れません。",
    missing: "まだ登録されていません。先に追加してください。",
  },
  pageEmailLead: "メールでお送りしたコードを入力してください。有効期間は5分です。",
  pageSmsLead: "電話にSMSでお送りしたコードを入力してください。",
  pagePasskey: "このアカウントの2段階目の確認はパスキーです。パスキーでログインしてください。",
};
