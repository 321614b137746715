import type { Impersonation } from "../en/impersonation";

export const impersonation: Impersonation = {
  banner: (actor: string) =>
    `${actor} handelt als diese Person (Impersonierung). Hier kann nichts gewährt oder geändert werden.`,
  readOnly:
    "Nur lesen: Solange der Support als diese Person handelt, lassen sich die Kontoeinstellungen ansehen, aber nicht ändern; die Person ändert sie in ihrer eigenen Sitzung.",
  sessionLabel: (actor: string) => `Impersoniert von ${actor}`,
  mail: {
    subject: "Jemand vom Support hat in Ihrem Namen gehandelt",
    text: "Hallo ${displayName},\n\n${actor} hat von ${start} bis ${end} in Ihrem Namen gehandelt, aus diesem Grund: ${reason}\n\nIn dieser Zeit konnte in Ihrem Konto nichts gewährt oder geändert werden. Ihre Sitzungen finden Sie hier:\n${link}\n",
    html: '<p>Hallo ${displayName},</p><p>${actor} hat von ${start} bis ${end} in Ihrem Namen gehandelt, aus diesem Grund: ${reason}</p><p>In dieser Zeit konnte in Ihrem Konto nichts gewährt oder geändert werden. <a href="${link}">Ihre Sitzungen ansehen</a>.</p>',
  },
};
