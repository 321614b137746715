import type { SetupLinks } from "../en/setup-links";

/** セットアップリンクのページ（契約 operators.md §5）と、組織のオーナーへのメール。 */
export const setupLinks: SetupLinks = {
  title: (org: string) => `${org} のサインインを設定`,
  lead: "このリンクで、IT 管理者のあなたが組織の ID プロバイダーを接続できます。ここで行ったことは、組織のオーナーが有効にするまで反映されません。",
  expires: (date: string) => `このリンクは ${date} まで有効です。`,
  gone: "このセットアップリンクは使えません。入力の誤り、期限切れ、または取り消し済みです。送ってくれた人に新しいリンクを依頼してください。",
  goneTitle: "無効なセットアップリンク",
  tooMany: (seconds: number) =>
    `お使いのネットワークからの試行が多すぎます。${seconds} 秒後にもう一度お試しください。`,
  notAllowed: "このセットアップリンクにはこの手順が含まれていません。",
  otherSite:
    "このフォームは別のサイトから送信されました。セットアップリンクを開き直し、そのページのフォームを使ってください。",
  back: "概要に戻る",
  steps: "手順",
  stepDomains: "メールドメインを確認する",
  stepSso: "シングルサインオンを接続する",
  stepScim: "SCIM でユーザーをプロビジョニングする",
  done: "完了",
  todo: "未完了",
  domainsLead:
    "DNS の TXT レコードを追加して、組織がメールドメインを所有していることを証明します。ここで設定するシングルサインオンは、このページで確認したドメインだけを対象にします。",
  domainLabel: "メールドメイン",
  addDomain: "ドメインを追加",
  txtName: "TXT レコード名",
  txtValue: "TXT レコードの値",
  checkDomain: "レコードを確認",
  verified: "確認済み",
  notVerified: "未確認",
  domainChecked: (domain: string) => `${domain} を確認しました。`,
  domainNotFound: (domain: string) =>
    `${domain} の TXT レコードはまだ見つかりません。DNS の変更には数分かかることがあります。しばらくしてから再度確認してください。`,
  dnsUnavailable:
    "DNS の照会に応答がありませんでした。何も変更されていません。1 分後にもう一度確認してください。",
  domainVerifiedBefore: (domain: string) =>
    `${domain} はこのリンク以外の方法で、すでにこの組織のドメインとして確認済みです。接続でこのドメインを扱うかは組織のオーナーが決めます。`,
  domainRefused: (domain: string) =>
    `${domain} は追加できません。公開メールドメインであるか、ドメイン名ではないか、別の組織が確認済みです。`,
  ssoLead:
    "ID プロバイダーを選んでください。ガイドに貼り付ける正確な値と、プロバイダーから受け取る値が示されます。",
  chooseIdp: "ID プロバイダー",
  start: "開始",
  connections: "このリンクで設定した接続",
  noConnections: "まだありません。",
  inactive: "無効：テストが成功した後にオーナーが有効にします",
  active: "有効",
  guideTitle: (idp: string) => `${idp} を接続`,
  inYourIdp: (idp: string) => `${idp} での操作`,
  pasteThese: "次の値を貼り付けます：",
  giveBack: "その後、表示された値を入力します：",
  metadataUrl: "IdP メタデータ URL",
  metadataXml: "または IdP メタデータ XML",
  issuer: "発行者 URL（ディスカバリー文書はその下の /.well-known/openid-configuration にあります）",
  clientId: "クライアント ID",
  clientSecret: "クライアントシークレット",
  create: "接続を保存",
  noDomainsYet: "先にドメインを確認してください。接続はこのリンクで確認したドメインだけを対象にします。",
  connectionTitle: (type: string) => `${type} 接続`,
  valuesToPaste: "ID プロバイダーに入力する値",
  test: "接続をテスト",
  testLead:
    "確認済みドメインのアカウントで ID プロバイダーにサインインしてください。ここでは誰もサインインしません。テストは応答を確認するだけです。",
  testNone: "まだテストしていません。",
  testOk: (email: string) =>
    `テストに成功しました。ID プロバイダーが ${email} を保証しました。組織のオーナーに、有効にできることを知らせました。`,
  testFailed: (why: string) => `前回のテストは失敗しました：${why}`,
  testWhy: {
    "sso-email-outside-domains": "示されたメールアドレスが、このリンクで確認したドメインに含まれていません。",
    "sso-assertion-invalid": "応答を検証できませんでした（署名、オーディエンス、または時刻）。",
    "invalid-state":
      "このブラウザーで開始されたテストではないか、時間がかかりすぎました。もう一度開始してください。",
    other: "ID プロバイダーの応答が拒否されました。",
  },
  scimLead:
    "ID プロバイダーがここでユーザーを作成、更新、無効化します。このページで作成したトークンでは、誰も組織のオーナーや管理者にできません。",
  scimBaseUrl: "SCIM ベース URL",
  scimToken: "Bearer トークン",
  scimTokenOnce: "今すぐトークンをコピーしてください。表示されるのは一度だけです。",
  makeToken: "SCIM トークンを作成",
  tokens: "このリンクで作成したトークン",
  noTokens: "まだありません。",
  lastUsed: (date: string) => `ID プロバイダーからの最後の呼び出し：${date}`,
  neverUsed:
    "ID プロバイダーからの呼び出しはまだありません。プロバイダー側で接続テストを実行してから、ここで確認してください。",
  checkAgain: "再確認",
  made: (date: string) => `作成日時：${date}`,
  readyMail: {
    subject: "${orgName} のサインイン接続を有効にできます",
    text: "${displayName} 様\n\nIT 管理者がセットアップリンクで ${orgName} の ${type} 接続を設定し、テストに成功しました（ID プロバイダーが ${email} を保証しました）。\n\nオーナーが有効にするまで、この接続は無効のままです。接続：${connectionId}\n${link}\n",
    html: '<p>${displayName} 様</p><p>IT 管理者がセットアップリンクで <strong>${orgName}</strong> の ${type} 接続を設定し、テストに成功しました（ID プロバイダーが ${email} を保証しました）。</p><p>オーナーが有効にするまで、この接続は無効のままです。接続：${connectionId}</p><p><a href="${link}">アプリを開く</a></p>',
  },
};
