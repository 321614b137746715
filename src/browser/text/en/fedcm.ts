/**
 * The page that ends a sign-in the browser's FedCM prompt opened in a pop-up (src/fedcm/login-popup.ts), in English.
 */
export const fedcm = {
  signedInTitle: "You are signed in",
  closesItself:
    "This window closes by itself. If it stays open, close it and go back to the site that asked you to sign in.",
};

export type Fedcm = typeof fedcm;
