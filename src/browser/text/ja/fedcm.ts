import type { Fedcm } from "../en/fedcm";

export const fedcm: Fedcm = {
  signedInTitle: "ログインしました",
  closesItself:
    "このウィンドウは自動的に閉じます。閉じない場合は、ウィンドウを閉じて、ログインを求めたサイトに戻ってください。",
};
