export const mailCode = {
  text: "Oder geben Sie diesen Code ein: ${code}",
  html: "<p>Oder geben Sie diesen Code ein: <strong>${code}</strong></p>",
};
