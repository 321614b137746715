/**
 * OpenID CIBA (src/oauth2/ciba/): a client asks the user to approve something on this device. The mail (template
 * "ciba-request"; placeholders `${displayName}`, `${clientName}`, `${bindingMessage}`, `${link}`, `${time}`: when
 * the request expires), the approval page's words, and the account center's "waiting for you" section. The client's
 * binding message is always shown quoted, under `messageFrom`, so it cannot pass for the service's own words.
 */
export const ciba = {
  mail: {
    subject: "${clientName} asks for your approval",
    text: "Hello ${displayName},\n\n${clientName} asks you to approve a request.\n\nMessage from ${clientName}: ${bindingMessage}\n\nOpen this link, sign in and approve or deny it before ${time}:\n${link}\n\nNothing is approved by opening the link. If you did not expect this, deny it.\n",
    html: '<p>Hello ${displayName},</p><p>${clientName} asks you to approve a request.</p><p>Message from ${clientName}: ${bindingMessage}</p><p><a href="${link}">Review the request</a> (sign in, then approve or deny it) before ${time}.</p><p>Nothing is approved by opening the link. If you did not expect this, deny it.</p>',
  },
  /** Stands in for `${bindingMessage}` in the mail when the client sent none. */
  noMessage: "(no message)",
  /** The fixed header above the client's binding message on the approval page. */
  messageFrom: (clientName: string) => `Message from ${clientName}`,
  wantsApproval: "asks for your approval, on behalf of an app you use",
  warning:
    "Approve only if you are doing this right now and the message matches what the app shows. If you did not expect it, deny it.",
  approvedTitle: "Request approved",
  approvedLead: "The app has been told. You can close this page.",
  deniedTitle: "Request denied",
  deniedLead: "The app has been told that you said no. You can close this page.",
  otherAccountTitle: "This request is for another account",
  otherAccountLead: "Sign in with the account the request was sent to, then open the link again.",
  account: {
    title: "Waiting for you",
    lead: "Apps that asked for your approval. Review each one; nothing is approved until you say so.",
    client: "App",
    message: "Message",
    expires: "Expires",
    review: "Review",
    none: "Nothing is waiting for your approval.",
  },
};

export type Ciba = typeof ciba;
