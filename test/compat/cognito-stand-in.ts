// A stand-in for Amazon Cognito's user pool API on loopback, for test/compat/cognito-migration.test.ts: the hook of
// docs/migrating-from-cognito.md asks it whether a password is right, over Cognito's own JSON protocol (`POST /`,
// `Content-Type: application/x-amz-json-1.1`, `X-Amz-Target: AWSCognitoIdentityProviderService.<operation>`, errors
// as a 400 with `__type` and `x-amzn-ErrorType`). Only `InitiateAuth` with `USER_PASSWORD_AUTH` is spoken: what the
// guide's hook calls. The pool below is the Cognito side of the test's export: users sign in with their email (email
// as the username attribute), and an unknown user is "Incorrect username or password." as a pool that prevents user
// existence errors (Cognito's default) says it. Every other compat file's users are unknown here, so the shared
// server's hook answers them `{"verified": false}`: the 401 they got without it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** The pool's app client without a secret, `ALLOW_USER_PASSWORD_AUTH` on (the guide's). */
export const COGNITO_CLIENT_ID = "5compatcognitoappclient0001";

export interface PoolUser {
  /** Cognito's `sub`: the id the import keeps. */
  sub: string;
  username: string;
  email: string;
  password: string;
  status: "CONFIRMED" | "FORCE_CHANGE_PASSWORD" | "RESET_REQUIRED" | "UNCONFIRMED";
  enabled: boolean;
  /** TOTP enrolled: a right password is answered with the `SOFTWARE_TOKEN_MFA` challenge. */
  totp?: boolean;
}

/**
 * Carol, Dave and Erin are test/fixtures/import-users/cognito-users.json's users (Erin signs in with Google, so she
 * has no password at Cognito and is not here); the test's export adds Frank, Gina and Hank; Olive is in the pool but
 * was never imported (a user who signed up at Cognito after the export).
 */
export const COGNITO_POOL: readonly PoolUser[] = [
  {
    sub: "8f1c2f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
    username: "8f1c2f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
    email: "carol.cognito@example.com",
    password: "Carol's Cognito password 1",
    status: "CONFIRMED",
    enabled: true,
  },
  {
    sub: "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d",
    username: "dave",
    email: "dave.cognito@example.com",
    password: "Dave's Cognito password 1",
    status: "CONFIRMED",
    enabled: false,
  },
  {
    sub: "6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    username: "6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    email: "frank.cognito@example.com",
    password: "Frank's Cognito password 1",
    status: "CONFIRMED",
    enabled: true,
  },
  {
    sub: "7c2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a",
    username: "7c2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a",
    email: "gina.cognito@example.com",
    password: "Gina's Cognito password 1",
    status: "CONFIRMED",
    enabled: true,
    totp: true,
  },
  {
    sub: "8d3f4a5b-6c7d-4e8f-8a9b-1c2d3e4f5a6b",
    username: "8d3f4a5b-6c7d-4e8f-8a9b-1c2d3e4f5a6b",
    email: "hank.cognito@example.com",
    password: "Hank's temporary password 1",
    status: "FORCE_CHANGE_PASSWORD",
    enabled: true,
  },
  {
    sub: "9e4a5b6c-7d8e-4f9a-9b0c-2d3e4f5a6b7c",
    username: "9e4a5b6c-7d8e-4f9a-9b0c-2d3e4f5a6b7c",
    email: "olive.cognito@example.com",
    password: "Olive's Cognito password 1",
    status: "CONFIRMED",
    enabled: true,
  },
];

type Answer = { status: number; type?: string; body: Record<string, unknown> };

const refusal = (type: string, message: string): Answer => ({
  status: 400,
  type,
  body: { __type: type, message },
});

function initiateAuth(request: Record<string, unknown>): Answer {
  if (request.ClientId !== COGNITO_CLIENT_ID) {
    return refusal(
      "ResourceNotFoundException",
      `User pool client ${String(request.ClientId)} does not exist.`,
    );
  }
  if (request.AuthFlow !== "USER_PASSWORD_AUTH") {
    return refusal("InvalidParameterException", "Auth flow not enabled for this client");
  }
  const parameters = (request.AuthParameters ?? {}) as Record<string, unknown>;
  const name = String(parameters.USERNAME ?? "").toLowerCase();
  const user = COGNITO_POOL.find((u) => u.username === name || u.email === name);
  if (!user || user.password !== parameters.PASSWORD) {
    return refusal("NotAuthorizedException", "Incorrect username or password.");
  }
  if (!user.enabled) return refusal("NotAuthorizedException", "User is disabled.");
  if (user.status === "RESET_REQUIRED")
    return refusal("PasswordResetRequiredException", "Password reset required.");
  if (user.status === "UNCONFIRMED") return refusal("UserNotConfirmedException", "User is not confirmed.");
  const session = crypto.randomUUID();
  if (user.status === "FORCE_CHANGE_PASSWORD") {
    return {
      status: 200,
      body: { ChallengeName: "NEW_PASSWORD_REQUIRED", Session: session, ChallengeParameters: {} },
    };
  }
  if (user.totp) {
    return {
      status: 200,
      body: { ChallengeName: "SOFTWARE_TOKEN_MFA", Session: session, ChallengeParameters: {} },
    };
  }
  const token = `stand-in.${user.sub}.${session}`;
  return {
    status: 200,
    body: {
      AuthenticationResult: {
        AccessToken: token,
        IdToken: token,
        RefreshToken: session,
        ExpiresIn: 3600,
        TokenType: "Bearer",
      },
      ChallengeParameters: {},
    },
  };
}

async function answer(incoming: IncomingMessage): Promise<Answer> {
  const target = String(incoming.headers["x-amz-target"] ?? "");
  if (incoming.method !== "POST" || incoming.url !== "/") return refusal("UnknownOperationException", "");
  if (incoming.headers["content-type"] !== "application/x-amz-json-1.1") {
    return refusal("SerializationException", "Content-Type must be application/x-amz-json-1.1");
  }
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
  } catch {
    return refusal("SerializationException", "Malformed JSON");
  }
  if (target === "AWSCognitoIdentityProviderService.InitiateAuth") return initiateAuth(request);
  return refusal("UnknownOperationException", "");
}

export async function startCognitoStandIn(): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const server: Server = createServer((incoming, outgoing: ServerResponse) => {
    void answer(incoming).then(({ status, type, body }) => {
      outgoing.writeHead(status, {
        "content-type": "application/x-amz-json-1.1",
        "x-amzn-requestid": crypto.randomUUID(),
        ...(type ? { "x-amzn-errortype": `${type}:` } : {}),
      });
      outgoing.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
