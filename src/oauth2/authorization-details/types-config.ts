import { z } from "zod";
import { LANGUAGES, type Language } from "../../browser/text";
import { LIMITS } from "./limits";
import { typeNameProblem } from "./parse";
import { typeSchemaProblem } from "./schema-subset";
import { templateProblem } from "./template";

/**
 * A type of RFC 9396 authorization details one client may use (contract operators.md §2), as the admin sets it on the
 * client (`authorizationDetailsTypes`): its name, the JSON Schema its fields must match, and the template the consent
 * and approval pages show it with. A template is one text, or one per language (the page's language first, then
 * English, then any).
 */
export interface AuthorizationDetailsType {
  type: string;
  schema: Record<string, unknown>;
  template: string | Partial<Record<Language, string>>;
}

/** A client's record as this module reads it: the types it may use (empty: none). */
export interface ClientWithDetailTypes {
  authorizationDetailsTypes: AuthorizationDetailsType[];
}

const templateText = z
  .string()
  .min(1)
  .max(LIMITS.templateChars)
  .superRefine((template, ctx) => {
    const problem = templateProblem(template);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const typeSchema = z.strictObject({
  type: z.string().superRefine((type, ctx) => {
    const problem = typeNameProblem(type);
    if (problem) ctx.addIssue({ code: "custom", message: `the type ${problem}` });
  }),
  schema: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    const problem = typeSchemaProblem(schema);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  template: z.union([
    templateText,
    z
      .partialRecord(z.enum(LANGUAGES), templateText)
      .refine((templates) => Object.keys(templates).length > 0, "name at least one language"),
  ]),
});

/** `authorizationDetailsTypes` on the admin API: a few types, each named once. */
export const authorizationDetailsTypesSchema = z
  .array(typeSchema)
  .max(LIMITS.types)
  .refine(
    (types) => new Set(types.map((entry) => entry.type)).size === types.length,
    "each type may be listed once",
  );
