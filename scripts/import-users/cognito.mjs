// Cognito: `aws cognito-idp list-users --user-pool-id …` ({"Users":[{Username, Attributes[{Name, Value}], UserStatus,
// Enabled, UserCreateDate, UserLastModifiedDate}]}; the CLI pages it for you, one document). Cognito never lets a
// password hash leave: these users come in without a password, and the lazy-migration hook
// (AUTH_HOOK_PASSWORD_MIGRATION_URL) checks each one's password with Cognito once, at their first sign-in here.
import { jsonDocument, RefusedFile } from "./files.mjs";
import { isoTime, providerId } from "./records.mjs";

const KIND = 'Cognito\'s ListUsers JSON ({"Users":[{"Username":…,"Attributes":[…]}]})';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Attributes carried in their own columns; every other one (custom:…, locale, …) goes to metadata.attributes. */
const MAPPED = new Set([
  "sub",
  "email",
  "email_verified",
  "phone_number",
  "phone_number_verified",
  "name",
  "picture",
  "identities",
]);

export async function* readCognito({ file }) {
  const document = await jsonDocument(file, KIND);
  const users = document?.Users;
  if (!Array.isArray(users) || (users.length > 0 && typeof users[0]?.Username !== "string"))
    throw new RefusedFile(`${file} is not ${KIND}: no "Users" array of objects with Username`);
  for (const [index, user] of users.entries()) {
    if (typeof user?.Username !== "string" || user.Username === "") {
      yield { problem: { id: `Users[${index}]`, reason: "no Username: not imported" } };
      continue;
    }
    const attributes = new Map(
      (Array.isArray(user.Attributes) ? user.Attributes : []).map((a) => [
        String(a?.Name),
        String(a?.Value ?? ""),
      ]),
    );
    const leftOut = [];
    const identities = [];
    if (attributes.has("identities")) {
      try {
        for (const identity of JSON.parse(attributes.get("identities")))
          identities.push({
            provider: providerId(String(identity.providerName)),
            subject: String(identity.userId),
          });
      } catch {
        leftOut.push("an identities attribute that is not JSON");
      }
    }
    const metadata = { cognitoStatus: user.UserStatus ?? null };
    const others = [...attributes].filter(([name]) => !MAPPED.has(name));
    if (others.length > 0) metadata.attributes = Object.fromEntries(others);
    // The sub is Cognito's stable UUID for the user (the Username can be an email, and can change): kept as the id.
    const sub = attributes.get("sub");
    yield {
      record: {
        system: "cognito",
        sourceId: sub && UUID.test(sub) ? sub : user.Username,
        email: attributes.get("email") || null,
        emailVerified: attributes.get("email_verified") === "true",
        phone: attributes.get("phone_number") || null,
        phoneVerified: attributes.get("phone_number_verified") === "true",
        displayName: attributes.get("name") ?? "",
        avatarUrl: attributes.get("picture") ?? "",
        passwordHash: null,
        passwordHasher: null,
        totpSecret: null,
        disabled: user.Enabled === false,
        createdAt: isoTime(cognitoTime(user.UserCreateDate)),
        updatedAt: isoTime(cognitoTime(user.UserLastModifiedDate)),
        lastSeen: null,
        identities,
        metadata: { ...metadata, cognitoUsername: user.Username },
        leftOut,
      },
    };
  }
}

/** The AWS CLI v1 prints dates as epoch seconds (a number), v2 as ISO text. */
function cognitoTime(value) {
  return typeof value === "number" ? value * 1000 : value;
}
