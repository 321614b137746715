import type { Vault } from "../en/vault";

/** The account center's connected accounts (the token vault) in Japanese. */
export const vault: Vault = {
  title: "接続済みアカウント",
  lead: "許可したアプリがあなたの代わりに使える、他のサービスのアカウントです。鍵はここに保管され、アプリには短時間だけ有効なアクセスのみが渡されます。",
  none: "接続しているアカウントはありません。",
  account: "アカウント",
  apps: "許可したアプリ",
  noApps: "まだ許可したアプリはありません。",
  never: "未使用",
  lastUsed: (date, uses) => `最終利用 ${date}（${uses} 回）`,
};
