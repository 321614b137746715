import type { Impersonation } from "../en/impersonation";

export const impersonation: Impersonation = {
  banner: (actor: string) =>
    `${actor} がこのユーザーとして操作しています（なりすまし）。ここでは何も許可・変更できません。`,
  readOnly:
    "閲覧のみ：サポートがこのユーザーとして操作している間、アカウントの設定は表示できますが変更できません。変更はユーザー本人のセッションで行います。",
  sessionLabel: (actor: string) => `${actor} によるなりすまし`,
  mail: {
    subject: "サポート担当者があなたとして操作しました",
    text: "${displayName} 様\n\n${actor} が ${start} から ${end} まで、次の理由であなたとして操作しました：${reason}\n\nその間、あなたのアカウントでは何も許可・変更できませんでした。セッションの一覧はこちら：\n${link}\n",
    html: '<p>${displayName} 様</p><p>${actor} が ${start} から ${end} まで、次の理由であなたとして操作しました：${reason}</p><p>その間、あなたのアカウントでは何も許可・変更できませんでした。<a href="${link}">セッションを見る</a>。</p>',
  },
};
