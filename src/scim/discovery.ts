import {
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  MAX_RESULTS,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
  USER_SCHEMA,
} from "./schemas";

/**
 * The discovery documents (RFC 7644 §4, RFC 7643 §5–7): what this service supports, which resource types it has, and
 * their schemas. Plain data; `base` is the SCIM root (`{AUTH_SERVER_URL}/scim/v2`).
 */

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: "https://datatracker.ietf.org/doc/html/rfc7644",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description:
          "A SCIM token of the organization (POST /orgs/{orgId}/scim-tokens), as `Authorization: Bearer`.",
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string) {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "A user of the organization",
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "A group of the organization's users; a group named after an org role gives it",
      schema: GROUP_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/Group` },
    },
  ];
}

interface AttributeOptions {
  type?: "string" | "boolean" | "complex" | "reference";
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: "readOnly" | "readWrite" | "immutable" | "writeOnly";
  returned?: "always" | "default" | "never";
  uniqueness?: "none" | "server" | "global";
  subAttributes?: ReturnType<typeof attribute>[];
  referenceTypes?: string[];
}

/** One attribute definition (RFC 7643 §7) with the RFC's defaults spelled out. */
function attribute(
  name: string,
  description: string,
  options: AttributeOptions = {},
): Record<string, unknown> {
  const type = options.type ?? "string";
  return {
    name,
    type,
    multiValued: options.multiValued ?? false,
    description,
    required: options.required ?? false,
    ...(type === "string" || type === "reference" ? { caseExact: options.caseExact ?? false } : {}),
    mutability: options.mutability ?? "readWrite",
    returned: options.returned ?? "default",
    uniqueness: options.uniqueness ?? "none",
    ...(options.subAttributes ? { subAttributes: options.subAttributes } : {}),
    ...(options.referenceTypes ? { referenceTypes: options.referenceTypes } : {}),
  };
}

const multiValue = (what: string) => [
  attribute("value", `The ${what}`),
  attribute("type", "A label: work, home, other"),
  attribute("primary", "The primary value", { type: "boolean" }),
  attribute("display", "A name for people", { mutability: "readOnly" }),
];

const userAttributes = [
  attribute("userName", "The user's email address; it can't be changed through SCIM", {
    required: true,
    uniqueness: "server",
    mutability: "immutable",
  }),
  attribute("name", "The user's name", {
    type: "complex",
    subAttributes: [
      "formatted",
      "familyName",
      "givenName",
      "middleName",
      "honorificPrefix",
      "honorificSuffix",
    ].map((part) => attribute(part, `The ${part} part of the name`)),
  }),
  attribute("displayName", "The name people see"),
  attribute("emails", "Email addresses (the user's own is userName)", {
    multiValued: true,
    type: "complex",
    subAttributes: multiValue("email address"),
  }),
  attribute("active", "False suspends the membership and ends its sessions in the organization", {
    type: "boolean",
  }),
  attribute("groups", "The organization's groups the user is in", {
    multiValued: true,
    type: "complex",
    mutability: "readOnly",
    subAttributes: [
      attribute("value", "The group's id", { mutability: "readOnly" }),
      attribute("display", "The group's name", { mutability: "readOnly" }),
    ],
  }),
];

const groupAttributes = [
  attribute("displayName", "The group's name; an org role's name gives its members that role", {
    required: true,
    uniqueness: "server",
  }),
  attribute("members", "The organization's users in the group", {
    multiValued: true,
    type: "complex",
    subAttributes: [
      attribute("value", "The user's id", { mutability: "immutable", caseExact: true }),
      attribute("$ref", "The user's URI", {
        type: "reference",
        mutability: "immutable",
        referenceTypes: ["User"],
      }),
      attribute("type", "User", { mutability: "immutable" }),
    ],
  }),
];

export function schemas(base: string) {
  const schema = (id: string, name: string, description: string, attributes: unknown[]) => ({
    schemas: [SCHEMA_SCHEMA],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: "Schema", location: `${base}/Schemas/${id}` },
  });
  return [
    schema(USER_SCHEMA, "User", "User Account", userAttributes),
    schema(GROUP_SCHEMA, "Group", "Group", groupAttributes),
  ];
}
