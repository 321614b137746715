export const mailCode = {
  text: "O introduce este código: ${code}",
  html: "<p>O introduce este código: <strong>${code}</strong></p>",
};
