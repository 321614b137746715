export const mailCode = {
  text: "Ou saisissez ce code : ${code}",
  html: "<p>Ou saisissez ce code : <strong>${code}</strong></p>",
};
