import { z } from "zod";
import { type AnswerDoc, operation } from "../http/documented";

/**
 * The FedCM endpoints in the OpenAPI document: browsers call them, not apps, but an operator reads here what each
 * answers. Their errors are FedCM's `{"error": {"code"}}` (W3C FedCM § Identity assertion endpoint), not the API's.
 */

const fedcmErrorSchema = z.object({ error: z.object({ code: z.string() }) });
const error = (description: string): AnswerDoc => ({ description, schema: fedcmErrorSchema });

const PROMPT_ONLY =
  "Only the browser's own FedCM requests are answered: without `Sec-Fetch-Dest: webidentity` 400 " +
  "`invalid_request`; with the authorization server off (`AUTH_OAUTH2_PROVIDER_ENABLED`) 404.";

const COMMON = {
  400: error("Not the browser's FedCM request, a malformed one, or a caller no client registered."),
  404: error("The authorization server is off."),
  503: error("A database fault; try again."),
};

export const CONFIG_DOC = operation({
  summary: "FedCM config file",
  description: `The \`configURL\` a relying party names (W3C FedCM § The config file): every endpoint, the hosted sign-in page as \`login_url\`, the hosted pages' brand. ${PROMPT_ONLY}`,
  answers: {
    200: {
      description: "The config file.",
      schema: z.object({
        accounts_endpoint: z.string(),
        client_metadata_endpoint: z.string(),
        id_assertion_endpoint: z.string(),
        disconnect_endpoint: z.string(),
        login_url: z.string(),
        branding: z
          .object({
            name: z.string().optional(),
            background_color: z.string().optional(),
            color: z.string().optional(),
            icons: z.array(z.object({ url: z.string() })).optional(),
          })
          .optional(),
      }),
    },
    ...COMMON,
  },
});

export const ACCOUNTS_DOC = operation({
  summary: "FedCM accounts",
  description: `The person signed in to the hosted pages in this browser (the \`fedcm_session\` cookie, SameSite=None, docs/fedcm.md), with the clients they consented to as \`approved_clients\` (W3C FedCM § Accounts endpoint). Nobody signed in, an anonymous user or an impersonation: 401. ${PROMPT_ONLY}`,
  answers: {
    200: {
      description: "One account.",
      schema: z.object({
        accounts: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            email: z.string().optional(),
            tel: z.string().optional(),
            picture: z.string().optional(),
            approved_clients: z.array(z.string()),
            login_hints: z.array(z.string()).optional(),
            domain_hints: z.array(z.string()).optional(),
          }),
        ),
      }),
    },
    401: error("`login_required`: nobody is signed in to the hosted pages in this browser."),
    ...COMMON,
  },
});

export const CLIENT_METADATA_DOC = operation({
  summary: "FedCM client metadata",
  description: `The client's privacy policy and terms (\`policyUri\`, \`tosUri\` of the admin API), for a page of one of its \`fedcmOrigins\` only (the browser sends the page's \`Origin\`); any other caller, or an unknown client: 404. ${PROMPT_ONLY}`,
  request: { target: "query", schema: z.object({ client_id: z.string() }) },
  answers: {
    200: {
      description: "The links the prompt shows.",
      schema: z.object({
        privacy_policy_url: z.string().optional(),
        terms_of_service_url: z.string().optional(),
      }),
    },
    ...COMMON,
    404: error("Unknown client, not one of its FedCM origins, or the authorization server is off."),
  },
});

export const ASSERTION_DOC = operation({
  summary: "FedCM ID assertion",
  description: `The token of \`navigator.credentials.get({identity})\` (W3C FedCM § Identity assertion endpoint): an authorization code for \`client_id\`, exchanged at \`/oauth2/token\` without \`redirect_uri\` (with \`code_verifier\` when \`params\` held a \`code_challenge\`, which a public client must send). \`params\` (JSON) may hold \`code_challenge\`, \`code_challenge_method\` (S256), \`scope\` (default \`openid profile email\`) and \`nonce\`. Only for a page whose \`Origin\` is one of the client's \`fedcmOrigins\`, answered with CORS for that origin and credentials; any other caller gets 400 \`unauthorized_client\` without CORS. ${PROMPT_ONLY}`,
  request: {
    target: "form",
    schema: z.object({
      client_id: z.string(),
      account_id: z.string(),
      params: z.string().optional(),
      nonce: z.string().optional(),
      disclosure_text_shown: z.string().optional(),
      is_auto_selected: z.string().optional(),
    }),
  },
  answers: {
    200: { description: "The code, as `token`.", schema: z.object({ token: z.string() }) },
    401: error("`access_denied`: nobody is signed in to the hosted pages in this browser."),
    403: error("`access_denied`: a new consent without the browser's disclosure, or an impersonation."),
    ...COMMON,
  },
});

export const DISCONNECT_DOC = operation({
  summary: "FedCM disconnect",
  description: `Forgets the signed-in person's consent to \`client_id\` (W3C FedCM § Disconnect endpoint); \`account_hint\` is their id or email. Same origin rule and CORS as the assertion. ${PROMPT_ONLY}`,
  request: {
    target: "form",
    schema: z.object({ client_id: z.string(), account_hint: z.string() }),
  },
  answers: {
    200: { description: "The account disconnected.", schema: z.object({ account_id: z.string() }) },
    401: error("`access_denied`: nobody is signed in to the hosted pages in this browser."),
    ...COMMON,
  },
});
