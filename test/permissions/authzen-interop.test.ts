// The AuthZEN interop's "Todo" scenario (todo-1.1, test/fixtures/authzen/README.md): its five users and four roles,
// its policies written in Cedar over the service's own users, and EVERY decision it publishes, through the real
// AuthZEN endpoints at the host's root (evaluation and evaluations). Also the API's own edges: who may call it
// (threat: anyone asking the PDP what a user may do, learning the policies by probing), AuthZEN's error answers
// (threat: a hostile PEP's body taking the Worker down: too large, too deep), the evaluations semantics, the PDP
// metadata and the caller's request id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fixture from "../fixtures/authzen/todo-decisions.json";
import { SERVER, service } from "../helpers";
import { PROVIDER_ON } from "../oauth2/support";
import { ADMIN, access, admin, pepToken, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service(PROVIDER_ON);

/** The scenario's directory: its PIDs, the users' emails and roles (the payload spec's "Attributes" section). */
const DIRECTORY = [
  {
    pid: "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "rick@the-citadel.com",
    roles: ["admin", "evil_genius"],
  },
  {
    pid: "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "morty@the-citadel.com",
    roles: ["editor"],
  },
  {
    pid: "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "summer@the-smiths.com",
    roles: ["editor"],
  },
  {
    pid: "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "beth@the-smiths.com",
    roles: ["viewer"],
  },
  {
    pid: "CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "jerry@the-smiths.com",
    roles: ["viewer"],
  },
];

/** The scenario's rules (its payload spec, "Requests and payloads"), in Cedar. */
const TODO_SCHEMA = `${SERVICE_SCHEMA}
entity user;
entity todo { ownerID?: String };
action can_read_user appliesTo { principal: User, resource: user };
action can_read_todos, can_create_todo, can_update_todo, can_delete_todo appliesTo { principal: User, resource: todo };
`;
const TODO_POLICIES = `
// Everyone reads users' pictures and the list.
permit (principal, action in [Action::"can_read_user", Action::"can_read_todos"], resource);
// Editors and admins create.
permit (principal, action == Action::"can_create_todo", resource)
  when { principal in Role::"editor" || principal in Role::"admin" };
// An evil genius completes anyone's todo; an admin deletes anyone's.
permit (principal in Role::"evil_genius", action == Action::"can_update_todo", resource);
permit (principal in Role::"admin", action == Action::"can_delete_todo", resource);
// An editor completes and deletes their own.
permit (principal in Role::"editor", action in [Action::"can_update_todo", Action::"can_delete_todo"], resource is todo)
  when { resource has ownerID && principal has email && resource.ownerID == principal.email };
`;

let headers: Record<string, string>;
/** The fixture with the scenario's PIDs and emails replaced by this run's users' ids and (unique) emails. */
let mapped: typeof fixture;

beforeAll(async () => {
  await usePolicies(svc, TODO_SCHEMA, TODO_POLICIES);
  let text = JSON.stringify(fixture);
  for (const entry of DIRECTORY) {
    const [name, domain] = entry.email.split("@");
    const user = await userWith(svc, entry.roles, `${name}-${crypto.randomUUID().slice(0, 8)}@${domain}`);
    text = text.replaceAll(entry.pid, user.id).replaceAll(entry.email, user.email);
  }
  mapped = JSON.parse(text);
  headers = { authorization: `Bearer ${await pepToken(svc)}` };
});

// Policies are global: the next file finds none in force, as before this one.
afterAll(async () => {
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
});

describe("AuthZEN interop: Todo 1.1", () => {
  it("answers every published evaluation as published", async () => {
    expect(mapped.evaluation).toHaveLength(40);
    const answers = await Promise.all(
      mapped.evaluation.map(async ({ request }) => {
        const response = await access(svc, "evaluation", request, headers);
        expect(response.status).toBe(200);
        return ((await response.json()) as { decision: boolean }).decision;
      }),
    );
    expect(answers).toEqual(mapped.evaluation.map(({ expected }) => expected));
  });

  it("answers every published evaluations request as published, and each of its evaluations alone alike", async () => {
    expect(mapped.evaluations).toHaveLength(3);
    for (const { request, expected } of mapped.evaluations) {
      const response = await access(svc, "evaluations", request, headers);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { evaluations: { decision: boolean }[] };
      expect(body.evaluations.map(({ decision }) => ({ decision }))).toEqual(expected);
    }
    // The same batches through the single endpoint, each evaluation with the top-level defaults.
    const { subject, action, evaluations } = mapped.evaluations[1]!.request;
    const alone = await Promise.all(
      evaluations.map(async ({ resource }) => {
        const response = await access(svc, "evaluation", { subject, action, resource }, headers);
        return ((await response.json()) as { decision: boolean }).decision;
      }),
    );
    expect(alone).toEqual(mapped.evaluations[1]!.expected.map(({ decision }) => decision));
  });
});

describe("the AuthZEN API", () => {
  const morty = () => mapped.evaluations[1]!.request;

  it("applies evaluations_semantic: execute_all, deny_on_first_deny, permit_on_first_permit", async () => {
    // Morty: Rick's todo false, his own true.
    const ask = async (semantic?: string) => {
      const body = { ...morty(), ...(semantic ? { options: { evaluations_semantic: semantic } } : {}) };
      const response = await access(svc, "evaluations", body, headers);
      expect(response.status).toBe(200);
      return ((await response.json()) as { evaluations: { decision: boolean }[] }).evaluations.map(
        (e) => e.decision,
      );
    };
    expect(await ask()).toEqual([false, true]);
    expect(await ask("execute_all")).toEqual([false, true]);
    expect(await ask("deny_on_first_deny")).toEqual([false]);
    expect(await ask("permit_on_first_permit")).toEqual([false, true]);
    const reversed = { ...morty(), evaluations: [...morty().evaluations].reverse() };
    const first = await access(
      svc,
      "evaluations",
      { ...reversed, options: { evaluations_semantic: "permit_on_first_permit" } },
      headers,
    );
    expect(((await first.json()) as { evaluations: unknown[] }).evaluations).toEqual([
      { decision: true, context: { reason_admin: { policies: [expect.any(String)] } } },
    ]);
    // Without evaluations, the evaluations endpoint answers as the evaluation endpoint does.
    const single = await access(svc, "evaluations", mapped.evaluation[0]!.request, headers);
    expect(await single.json()).toMatchObject({ decision: true });
  });

  it("takes the admin secret or a client's token with the authzen scope; refuses anything else with 401", async () => {
    const request = mapped.evaluation[0]!.request;
    expect((await access(svc, "evaluation", request, ADMIN)).status).toBe(200);
    const refused: Record<string, string>[] = [
      {},
      { authorization: "Bearer not-a-token" },
      { "x-hasura-admin-secret": "wrong" },
      // A machine token without the scope: a client made for something else.
      { authorization: `Bearer ${await pepToken(svc, [])}` },
    ];
    for (const sent of refused) {
      const response = await access(svc, "evaluation", request, sent);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      expect(typeof (await response.json())).toBe("string");
    }
  });

  it("answers AuthZEN's 400 for a missing part, an unknown type, a body too large or too deep; echoes X-Request-ID", async () => {
    const request = mapped.evaluation[0]!.request;
    let deep: unknown = "leaf";
    for (let i = 0; i < 40; i++) deep = { deeper: deep };
    const bad: unknown[] = [
      "{not json",
      [request],
      { action: request.action, resource: request.resource },
      { subject: request.subject, resource: request.resource },
      { subject: request.subject, action: request.action },
      { ...request, subject: { type: "robot", id: "r2" } },
      { ...request, resource: { type: "not a type!", id: "1" } },
      { ...request, context: deep },
      { ...request, context: { padding: "x".repeat(300 * 1024) } },
    ];
    for (const body of bad) {
      const response = await access(svc, "evaluation", body, headers);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(typeof (await response.json())).toBe("string");
    }
    const tooMany = { ...morty(), evaluations: Array.from({ length: 201 }, () => morty().evaluations[0]) };
    expect((await access(svc, "evaluations", tooMany, headers)).status).toBe(400);
    const badSemantic = { ...morty(), options: { evaluations_semantic: "whatever" } };
    expect((await access(svc, "evaluations", badSemantic, headers)).status).toBe(400);
    const tagged = await access(svc, "evaluation", request, { ...headers, "x-request-id": "pep-42" });
    expect(tagged.headers.get("x-request-id")).toBe("pep-42");
  });

  it("publishes the PDP metadata at the root and under the server URL's path", async () => {
    const root = await svc.request("GET", `${SERVER}/.well-known/authzen-configuration`);
    expect(root.status).toBe(200);
    expect(await root.json()).toEqual({
      policy_decision_point: SERVER,
      access_evaluation_endpoint: `${SERVER}/access/v1/evaluation`,
      access_evaluations_endpoint: `${SERVER}/access/v1/evaluations`,
    });
    const inserted = await svc.request("GET", `${SERVER}/.well-known/authzen-configuration/auth/v1`);
    expect(await inserted.json()).toMatchObject({
      policy_decision_point: `${SERVER}/auth/v1`,
      access_evaluation_endpoint: `${SERVER}/access/v1/evaluation`,
    });
  });
});
