import { z } from "zod";
import type { AnswerDoc } from "../http/documented";
import { SCIM_ERROR_SCHEMA } from "./errors";
import { LIST_RESPONSE_SCHEMA } from "./schemas";

/** The answers' shapes, for the OpenAPI document (the tests check them against RFC 7643's schemas, test/scim/). */

const meta = z.object({
  resourceType: z.string(),
  created: z.string().optional(),
  lastModified: z.string().optional(),
  location: z.string(),
  version: z.string().optional(),
});

export const scimUserSchema = z.looseObject({
  schemas: z.array(z.string()),
  id: z.string(),
  externalId: z.string().optional(),
  userName: z.string().meta({ examples: ["ana@acme.example"] }),
  active: z.boolean(),
  displayName: z.string().optional(),
  name: z.looseObject({ givenName: z.string().optional(), familyName: z.string().optional() }).optional(),
  emails: z.array(z.looseObject({ value: z.string().optional() })).optional(),
  meta,
});

export const scimGroupSchema = z.looseObject({
  schemas: z.array(z.string()),
  id: z.string(),
  displayName: z.string(),
  externalId: z.string().optional(),
  members: z.array(z.looseObject({ value: z.string() })).optional(),
  meta,
});

export const listSchema = (item: z.ZodType) =>
  z.object({
    schemas: z.array(z.literal(LIST_RESPONSE_SCHEMA)),
    totalResults: z.number().int(),
    startIndex: z.number().int(),
    itemsPerPage: z.number().int(),
    Resources: z.array(item),
  });

export const scimErrorSchema = z.object({
  schemas: z.array(z.literal(SCIM_ERROR_SCHEMA)),
  status: z.string().meta({ examples: ["400"] }),
  scimType: z.string().optional(),
  detail: z.string(),
});

export const discoverySchema = z.looseObject({ schemas: z.array(z.string()) });

/** A SCIM answer: `application/scim+json`. */
export const scim = (description: string, schema: z.ZodType): AnswerDoc => ({
  description,
  schema,
  media: "scim",
});

const error = (description: string): AnswerDoc => scim(description, scimErrorSchema);

/** The errors every authenticated SCIM operation may answer, in SCIM's body (RFC 7644 §3.12). */
export const SCIM_ERRORS: Record<number, AnswerDoc> = {
  400: error(
    "Bad input: `scimType` invalidValue, invalidSyntax, invalidFilter, invalidPath, noTarget or mutability.",
  ),
  401: error("No SCIM token, or one that is unknown or revoked."),
  403: error("A token made through a setup link giving the admin role (contract operators.md §5)."),
  404: error("No such resource in the token's organization."),
  409: error(
    "`scimType` uniqueness (userName, externalId, displayName taken) or mutability (the last owner).",
  ),
  503: error("A dependency failed; try again (Retry-After)."),
};
