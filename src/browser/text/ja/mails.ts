import type { Mails } from "../en/mails";

export const mails: Mails = {
  "email-verify": {
    subject: "メールアドレスの確認",
    text: "${displayName} 様\n\nこのメールアドレスでアカウントが作成されました。ご本人の場合は、次のリンクからアドレスを確認してください。\n${link}\n\nお心当たりがない場合は、リンクを開かないでください。他の誰かがこのアドレスとパスワードを指定しています。このメールを無視すれば、そのアカウントは使えないままです。\n",
    html: '<p>${displayName} 様</p><p>このメールアドレスでアカウントが作成されました。ご本人の場合は、<a href="${link}">メールアドレスを確認</a>してください。</p><p>お心当たりがない場合は、リンクを開かないでください。他の誰かがこのアドレスとパスワードを指定しています。このメールを無視すれば、そのアカウントは使えないままです。</p>',
  },
  "signin-passwordless": {
    subject: "ログイン用リンク",
    text: "${displayName} 様\n\n次のリンクからログインしてください。\n${link}\n\nリンクの有効期限は1時間です。\n",
    html: '<p>${displayName} 様</p><p><a href="${link}">ログイン</a></p><p>リンクの有効期限は1時間です。</p>',
  },
  "signin-otp": {
    subject: "ログイン用コード",
    text: "${displayName} 様\n\nログイン用コードは ${code} です。有効期限は10分です。\n",
    html: "<p>${displayName} 様</p><p>ログイン用コードは <strong>${code}</strong> です。有効期限は10分です。</p>",
  },
  reauthentication: {
    subject: "ご本人確認",
    text: "${displayName} 様\n\nご本人確認のため、次のコードを入力してください: ${code}。有効期間は5分です。\n\nお心当たりがない場合は、第三者がアカウントを使用している可能性があります。パスワードを変更してください。\n",
    html: "<p>${displayName} 様</p><p>ご本人確認のため、次のコードを入力してください: <strong>${code}</strong>。有効期間は5分です。</p><p>お心当たりがない場合は、第三者がアカウントを使用している可能性があります。パスワードを変更してください。</p>",
  },
  "user-invitation": {
    subject: "ご招待",
    text: "こんにちは。\n\n${email} でアカウントを作成するよう招待されました。承諾するには次のリンクを開いてください:\n${link}\n\nリンクの有効期間は1時間です。お心当たりがない場合は、このメールを無視してください。\n",
    html: '<p>こんにちは。</p><p>${email} でアカウントを作成するよう招待されました。<a href="${link}">招待を承諾する</a></p><p>リンクの有効期間は1時間です。お心当たりがない場合は、このメールを無視してください。</p>',
  },
  "password-reset": {
    subject: "パスワードの再設定",
    text: "${displayName} 様\n\n次のリンクからパスワードを再設定してください。\n${link}\n\nお心当たりがない場合は、このメールを無視してください。\n",
    html: '<p>${displayName} 様</p><p><a href="${link}">パスワードを再設定</a></p><p>お心当たりがない場合は、このメールを無視してください。</p>',
  },
  "email-confirm-change": {
    subject: "新しいメールアドレスの確認",
    text: "${displayName} 様\n\n次のリンクから、${newEmail} をあなたのメールアドレスに設定してください。\n${link}\n",
    html: '<p>${displayName} 様</p><p><a href="${link}">${newEmail} をメールアドレスとして確認</a></p>',
  },
  "org-invitation": {
    subject: "${orgName} への招待",
    text: "こんにちは。\n\n${inviterName} さんが ${email} を ${orgName} に ${role} として招待しました。このアドレスでログインまたは登録してから、承諾してください。\n${link}\n\n招待の有効期限は7日間です。お心当たりがない場合は、このメールを無視してください。\n",
    html: '<p>こんにちは。</p><p>${inviterName} さんが ${email} を <strong>${orgName}</strong> に ${role} として招待しました。このアドレスでログインまたは登録してから、<a href="${link}">招待を承諾</a>してください。</p><p>招待の有効期限は7日間です。お心当たりがない場合は、このメールを無視してください。</p>',
  },
};
