import type { Level } from "./policy";
import type { Signals } from "./signals";

/**
 * A sign-in's level from its signals, with the reasons that set it (the audit and the hook see both). Deliberately
 * few rules, each a known attack's mark:
 * - high: impossible travel (a stolen password used from elsewhere while the owner is home), one address signing in
 *   to account after account (credential stuffing that got past the passwords), a near-certain bot, and a new
 *   country on a new device at once (issue 47's own case: "a new country on a new device is asked for a second
 *   factor");
 * - medium: any one of a new device, a new country, a likely bot, a flood from the network, a disposable address;
 * - low: nothing of these.
 */
export const BOT_HIGH_BELOW = 10;
export const BOT_MEDIUM_BELOW = 30;

export function levelOf(signals: Signals): { level: Level; reasons: string[] } {
  const high: string[] = [];
  const medium: string[] = [];
  const newDevice = signals.device === "new";
  if (signals.travel?.impossible) high.push("impossible-travel");
  if (signals.velocity.address) high.push("address-velocity");
  if (signals.botScore !== null && signals.botScore < BOT_HIGH_BELOW) high.push("bot");
  else if (signals.botScore !== null && signals.botScore < BOT_MEDIUM_BELOW) medium.push("likely-bot");
  if (newDevice && signals.newCountry) high.push("new-country-new-device");
  else if (signals.newCountry) medium.push("new-country");
  else if (newDevice) medium.push("new-device");
  if (signals.velocity.asn) medium.push("asn-velocity");
  if (signals.disposableEmail) medium.push("disposable-email");
  if (high.length > 0) return { level: "high", reasons: [...high, ...medium] };
  if (medium.length > 0) return { level: "medium", reasons: medium };
  return { level: "low", reasons: [] };
}
