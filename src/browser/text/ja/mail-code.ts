export const mailCode = {
  text: "または次のコードを入力してください: ${code}",
  html: "<p>または次のコードを入力してください: <strong>${code}</strong></p>",
};
