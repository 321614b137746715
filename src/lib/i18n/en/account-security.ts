/** The account center's security sections: TOTP and recovery codes, passkeys, PATs, linked providers, organizations. */
export const accountSecurity = {
  title: "Security",
};

export type AccountSecurity = typeof accountSecurity;
