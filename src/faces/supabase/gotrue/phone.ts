/** GoTrue takes a phone number with or without its `+` (and answers it without); the core keeps E.164. */
export const e164 = (number: string) => (number.startsWith("+") ? number : `+${number}`);
