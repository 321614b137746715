import type { Ciba } from "../en/ciba";

export const ciba: Ciba = {
  mail: {
    subject: "${clientName} が承認を求めています",
    text: "${displayName} 様\n\n${clientName} がリクエストの承認を求めています。\n\n${clientName} からのメッセージ: ${bindingMessage}\n\n${time} までにこのリンクを開き、サインインして承認または拒否してください:\n${link}\n\nリンクを開くだけでは何も承認されません。心当たりがない場合は拒否してください。\n",
    html: '<p>${displayName} 様</p><p>${clientName} がリクエストの承認を求めています。</p><p>${clientName} からのメッセージ: ${bindingMessage}</p><p>${time} までに<a href="${link}">リクエストを確認</a>してください (サインインしてから承認または拒否)。</p><p>リンクを開くだけでは何も承認されません。心当たりがない場合は拒否してください。</p>',
  },
  noMessage: "(メッセージなし)",
  messageFrom: (clientName: string) => `${clientName} からのメッセージ`,
  wantsApproval: "ご利用中のアプリの代理として、あなたの承認を求めています。",
  warning:
    "今ご自身で操作していて、メッセージがアプリの表示と一致する場合にのみ承認してください。心当たりがない場合は拒否してください。",
  approvedTitle: "リクエストを承認しました",
  approvedLead: "アプリに通知しました。このページは閉じてかまいません。",
  deniedTitle: "リクエストを拒否しました",
  deniedLead: "アプリに拒否したことを通知しました。このページは閉じてかまいません。",
  otherAccountTitle: "このリクエストは別のアカウント宛てです",
  otherAccountLead: "リクエストが送られたアカウントでサインインし、もう一度リンクを開いてください。",
  account: {
    title: "承認待ち",
    lead: "あなたの承認を求めたアプリです。それぞれ確認してください。承認するまで何も許可されません。",
    client: "アプリ",
    message: "メッセージ",
    expires: "期限",
    review: "確認",
    none: "承認待ちのものはありません。",
  },
};
