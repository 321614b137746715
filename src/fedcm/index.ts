/**
 * What the rest of the service may use of FedCM: the hosted sign-in page (src/pages/) adds Google's One Tap. The
 * identity provider's endpoints are the feature's routes (feature.ts).
 */
export { googleOneTap, type OneTap } from "./one-tap";
