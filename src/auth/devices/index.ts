/**
 * The new-device notice (contract §13): the device cookie, the devices each user signed in from, and the mail about a
 * new one. What the rest of core auth and the app use of it.
 */
// The account center names each session's device in its list the way the mail does.

export { writeDeviceCookie } from "./device-cookie";
export { type KnownBy, knownDeviceOf } from "./device-known";
export { type DeviceName, deviceNameOf } from "./device-name";
export { mailTime } from "./new-device-mail";
export { noticeDevice } from "./new-device-notice";
