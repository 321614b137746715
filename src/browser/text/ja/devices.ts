import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "アカウントへの新しいサインイン",
    text: "${displayName} 様\n\n新しいデバイスからアカウントにサインインがありました: ${device}、${place}、${time}。${risk}\n\nご本人によるものであれば、対応は不要です。心当たりがない場合は、そのセッションからサインアウトし、パスワードを変更してください:\n${link}\n",
    html: '<p>${displayName} 様</p><p>新しいデバイスからアカウントにサインインがありました: ${device}、${place}、${time}。${risk}</p><p>ご本人によるものであれば、対応は不要です。心当たりがない場合は、<a href="${link}">そのセッションからサインアウト</a>し、パスワードを変更してください。</p>',
  },
  device: (browser: string, system: string) => `${system} の ${browser}`,
  unknownBrowser: "不明なブラウザ",
  risk: {
    low: "このサインインのリスクは「低」と評価されました。",
    medium: "このサインインのリスクは「中」と評価されました。",
    high: "このサインインのリスクは「高」と評価されました。",
  },
  unknownPlace: "不明な場所",
};
