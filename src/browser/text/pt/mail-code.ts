export const mailCode = {
  text: "Ou introduza este código: ${code}",
  html: "<p>Ou introduza este código: <strong>${code}</strong></p>",
};
