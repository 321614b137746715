import { describe, expect, it } from "vitest";
import {
  type AuthorizationDetailsType,
  authorizationDetailsHtml,
  authorizationDetailsTypesSchema,
  narrowAuthorizationDetails,
  parseAuthorizationDetails,
  requestedAuthorizationDetails,
} from "../../../src/oauth2/authorization-details";
import { OAuth2Error } from "../../../src/oauth2/errors";

/** RFC 9396's own example type (§2), with a schema and a template as an admin would set them. */
const PAYMENT: AuthorizationDetailsType = {
  type: "payment_initiation",
  schema: {
    type: "object",
    required: ["instructedAmount", "creditorName"],
    additionalProperties: false,
    properties: {
      actions: { type: "array", items: { enum: ["initiate", "status", "cancel"] } },
      locations: { type: "array", items: { type: "string", format: "uri" } },
      instructedAmount: {
        type: "object",
        required: ["currency", "amount"],
        additionalProperties: false,
        properties: { currency: { enum: ["EUR", "USD"] }, amount: { type: "string", maxLength: 20 } },
      },
      creditorName: { type: "string", maxLength: 140 },
      creditorAccount: { type: "object", properties: { iban: { type: "string" } } },
    },
  },
  template: {
    en: "Pay {{ instructedAmount.amount }} {{instructedAmount.currency}} to {{creditorName}}",
    de: "{{ instructedAmount.amount }} {{instructedAmount.currency}} an {{creditorName}} zahlen",
  },
};
const CLIENT = { authorizationDetailsTypes: [PAYMENT] };
const PAY = {
  type: "payment_initiation",
  actions: ["initiate", "status"],
  locations: ["https://bank.example/payments"],
  instructedAmount: { currency: "EUR", amount: "123.50" },
  creditorName: "Merchant A",
};

/** The OAuth2 error a call throws: its code and description. */
function refusal(call: () => unknown): { error: string; description: string } | undefined {
  try {
    call();
  } catch (error) {
    if (error instanceof OAuth2Error) return { error: error.error, description: error.description };
    throw error;
  }
  return undefined;
}

describe("authorization details: parse (RFC 9396 §2)", () => {
  it("takes a JSON array of typed objects; an absent or empty parameter is none", () => {
    expect(parseAuthorizationDetails(JSON.stringify([PAY]))).toEqual([PAY]);
    expect(parseAuthorizationDetails(undefined)).toBeUndefined();
    expect(parseAuthorizationDetails("")).toBeUndefined();
  });

  it("refuses malformed values with invalid_authorization_details (§5)", () => {
    const bad = [
      "{not json",
      JSON.stringify(PAY), // an object, not an array
      "[]",
      JSON.stringify([{ actions: ["x"] }]), // no type
      JSON.stringify([{ type: "" }]),
      JSON.stringify([{ type: 7 }]),
      JSON.stringify([{ type: "a\u202Eb" }]), // invisible formatting in the type
      JSON.stringify(["payment_initiation"]),
      JSON.stringify([{ type: "t", actions: "initiate" }]), // §2.2: arrays of strings
      JSON.stringify([{ type: "t", locations: [1] }]),
      JSON.stringify([{ type: "t", identifier: ["x"] }]),
      JSON.stringify(Array.from({ length: 11 }, () => ({ type: "t" }))),
    ];
    for (const raw of bad)
      expect(refusal(() => parseAuthorizationDetails(raw))?.error, raw).toBe("invalid_authorization_details");
  });

  // Threat: a memory or CPU bomb (deep nesting, wide arrays, long text) spent before any check looks at it.
  it("bounds size, depth and width before anything walks the value", () => {
    const deep = `[{"type":"t","x":${"[".repeat(5000)}${"]".repeat(5000)}}]`;
    expect(refusal(() => parseAuthorizationDetails(deep))?.description).toMatch(/longer than 8192/);
    const nested = `[{"type":"t","x":${"[".repeat(20)}${"]".repeat(20)}}]`;
    expect(refusal(() => parseAuthorizationDetails(nested))?.description).toMatch(/nested too deeply/);
    const wide = JSON.stringify([{ type: "t", x: Array.from({ length: 101 }, () => 1) }]);
    expect(refusal(() => parseAuthorizationDetails(wide))?.description).toMatch(/too many elements/);
    const members = JSON.stringify([
      { type: "t", ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, 1])) },
    ]);
    expect(refusal(() => parseAuthorizationDetails(members))?.description).toMatch(/too many members/);
    const long = JSON.stringify([{ type: "t", x: "a".repeat(1001) }]);
    expect(refusal(() => parseAuthorizationDetails(long))?.description).toMatch(/string is too long/);
  });
});

describe("authorization details: a client's types and their schemas", () => {
  it("accepts a detail of an allowed type matching its schema", () => {
    expect(requestedAuthorizationDetails(CLIENT, JSON.stringify([PAY]))).toEqual([PAY]);
    expect(requestedAuthorizationDetails(CLIENT, undefined)).toBeUndefined();
  });

  // Threat: a client asking for a kind of access the admin never allowed it, or fields its type does not define.
  it("refuses a type the client may not use, and fields not matching the schema, without echoing them", () => {
    const other = refusal(() =>
      requestedAuthorizationDetails(CLIENT, JSON.stringify([PAY, { type: "<b>account_information</b>" }])),
    );
    expect(other).toEqual({
      error: "invalid_authorization_details",
      description: "authorization_details[1] has a type this client may not use",
    });
    expect(
      refusal(() => requestedAuthorizationDetails({ authorizationDetailsTypes: [] }, JSON.stringify([PAY]))),
    ).toMatchObject({ error: "invalid_authorization_details" });
    for (const fields of [
      { instructedAmount: { currency: "GBP", amount: "1" } },
      { instructedAmount: { currency: "EUR" } },
      { creditorName: 42 },
      { extra: true },
      { actions: ["steal"] },
      { locations: ["not a uri"] },
    ]) {
      const result = refusal(() =>
        requestedAuthorizationDetails(CLIENT, JSON.stringify([{ ...PAY, ...fields }])),
      );
      expect(result?.error, JSON.stringify(fields)).toBe("invalid_authorization_details");
      expect(result?.description).toMatch(/^authorization_details\[0\] does not match its type at \//);
    }
  });

  it("checks the admin's types when set: names, keywords, references, patterns, templates, sizes", () => {
    const ok = authorizationDetailsTypesSchema.safeParse([
      PAYMENT,
      { ...PAYMENT, type: "other", template: "Other" },
    ]);
    expect(ok.success).toBe(true);
    const problems = [
      [PAYMENT, PAYMENT], // twice
      [{ ...PAYMENT, type: "" }],
      [{ ...PAYMENT, type: "x".repeat(129) }],
      [{ ...PAYMENT, schema: { type: "string" } }], // a detail is an object
      [{ ...PAYMENT, schema: { type: "object", $ref: "https://evil.example/schema" } }],
      [{ ...PAYMENT, schema: { type: "object", $defs: { a: {} } } }],
      // Threat: an admin's regular expression that backtracks for seconds on a client's string.
      [{ ...PAYMENT, schema: { type: "object", properties: { a: { pattern: "^(a+)+$" } } } }],
      [{ ...PAYMENT, schema: { type: "object", properties: { a: { type: "strung" } } } }],
      [{ ...PAYMENT, schema: { type: "object", properties: { a: { format: "my-format" } } } }],
      [{ ...PAYMENT, schema: { type: "object", properties: { a: { minLength: -1 } } } }],
      [{ ...PAYMENT, schema: { type: "object", unknownKeyword: 1 } }],
      [{ ...PAYMENT, schema: { type: "object", $schema: "http://json-schema.org/draft-04/schema#" } }],
      [{ ...PAYMENT, schema: nestedSchema(14) }],
      [{ ...PAYMENT, schema: { type: "object", description: "x".repeat(17_000) } }],
      [{ ...PAYMENT, template: "Pay {{ amount" }],
      [{ ...PAYMENT, template: "Pay {{ constructor['x'] }}" }],
      [{ ...PAYMENT, template: {} }],
      [{ ...PAYMENT, template: { xx: "Pay" } }],
      [{ ...PAYMENT, extra: 1 }],
      Array.from({ length: 21 }, (_, i) => ({ ...PAYMENT, type: `t${i}` })),
    ];
    for (const types of problems) {
      expect(
        authorizationDetailsTypesSchema.safeParse(types).success,
        JSON.stringify(types).slice(0, 200),
      ).toBe(false);
    }
    expect(
      authorizationDetailsTypesSchema.safeParse([{ ...PAYMENT, schema: nestedSchema(10) }]).success,
    ).toBe(true);
  });
});

function nestedSchema(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}

describe("authorization details: narrowing (RFC 9396 §6, §6.1)", () => {
  const granted = [PAY, { type: "t", actions: ["read", "write"], locations: ["https://a.example"] }];

  it("gives what was granted when none are asked, and the same or fewer when asked", () => {
    expect(narrowAuthorizationDetails(granted, undefined)).toEqual(granted);
    expect(narrowAuthorizationDetails(null, undefined)).toBeUndefined();
    expect(narrowAuthorizationDetails(granted, [PAY])).toEqual([PAY]);
    const fewer = [{ type: "t", actions: ["read"], locations: ["https://a.example"] }];
    expect(narrowAuthorizationDetails(granted, fewer)).toEqual(fewer);
    expect(narrowAuthorizationDetails(granted, [{ ...PAY, actions: ["status"] }])).toEqual([
      { ...PAY, actions: ["status"] },
    ]);
  });

  // Threat: a refresh or code exchange that widens what the user approved.
  it("refuses anything wider or different", () => {
    const wider = [
      [{ ...PAY, instructedAmount: { currency: "EUR", amount: "9999" } }],
      [{ ...PAY, actions: ["initiate", "cancel"] }],
      [{ ...PAY, creditorAccount: { iban: "X" } }], // a member added
      [{ type: "payment_initiation", instructedAmount: PAY.instructedAmount, creditorName: "Merchant A" }], // dropped: not narrower
      [{ ...PAY, actions: [] }],
      [{ type: "t2", actions: ["read"] }],
    ];
    for (const requested of wider) {
      expect(refusal(() => narrowAuthorizationDetails(granted, requested))?.error).toBe(
        "invalid_authorization_details",
      );
    }
    expect(refusal(() => narrowAuthorizationDetails(undefined, [PAY]))?.error).toBe(
      "invalid_authorization_details",
    );
  });
});

describe("authorization details: shown to the person (consent, CIBA approval)", () => {
  it("renders the type's template in the page's language, escaped, and every field it leaves out", async () => {
    const hostile = {
      ...PAY,
      creditorName: '<script>alert(1)</script>"',
      instructedAmount: { currency: "EUR", amount: "001\u202E" },
      creditorAccount: { iban: "DE<b>89</b>" },
    };
    const page = String(await authorizationDetailsHtml(CLIENT, [hostile], "en"));
    expect(page).toContain(
      "Pay <strong>001\\u{202E}</strong> <strong>EUR</strong> to <strong>&lt;script&gt;",
    );
    expect(page).not.toContain("<script>");
    expect(page).not.toContain("<b>");
    // Fields the template does not show, each by name: nothing granted goes unseen.
    expect(page).toContain("<dt>actions</dt><dd>initiate, status</dd>");
    expect(page).toContain("<dt>locations</dt><dd>https://bank.example/payments</dd>");
    expect(page).toContain("<dt>creditorAccount</dt><dd>iban: DE&lt;b&gt;89&lt;/b&gt;</dd>");
    expect(page).not.toContain("<dt>creditorName</dt>");
    expect(page).not.toContain("<dt>instructedAmount</dt>");
    const german = String(await authorizationDetailsHtml(CLIENT, [PAY], "de"));
    expect(german).toContain(
      "<strong>123.50</strong> <strong>EUR</strong> an <strong>Merchant A</strong> zahlen",
    );
    const french = String(await authorizationDetailsHtml(CLIENT, [PAY], "fr"));
    expect(french).toContain("Pay <strong>123.50</strong>"); // English when the language has none
  });

  it("shows a field named in part, and never reaches past the detail's own members", async () => {
    const partial = { ...PAYMENT, template: "{{instructedAmount.amount}} {{constructor}} {{ __proto__.x }}" };
    const page = String(
      await authorizationDetailsHtml({ authorizationDetailsTypes: [partial] }, [PAY], "en"),
    );
    expect(page).toContain("<p><strong>123.50</strong> <strong>—</strong> <strong>—</strong></p>");
    expect(page).toContain("<dt>instructedAmount</dt>");
  });
});
