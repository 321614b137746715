import { activeSet } from "./active-set";
import { loadCedar } from "./cedar";
import { evaluateMany, type PermissionDeps } from "./evaluate";
import { checkEvaluation, PermissionRequestError } from "./request";

/**
 * AuthZEN's Action Search (§"Action Search API"): the actions the subject may perform on the resource. The candidates
 * are the actions the schema in force declares for the resource's type (Cedar's actions are a closed set the schema
 * lists), each evaluated as an evaluation request would be: a result used in an evaluation gets `true`, as its
 * §"Semantics" asks. The set is small and whole, so there is no paging.
 */
export async function searchActions(deps: PermissionDeps, body: Record<string, unknown>) {
  const { resource } = body;
  const type =
    typeof resource === "object" && resource !== null ? (resource as { type?: unknown }).type : undefined;
  if (typeof type !== "string") throw new PermissionRequestError("missing resource.type");
  const set = await activeSet(deps);
  const names = set.schema ? (await loadCedar()).schemaActions(set.schema, type) : [];
  const requests = names.map((name) => ({
    subject: body.subject,
    action: { name },
    resource: body.resource,
    context: body.context,
  }));
  // With no candidates the request is still checked (a stand-in for the action, the part a search leaves out), so a
  // bad one is refused as the other endpoints refuse it.
  if (requests.length === 0) {
    checkEvaluation({ subject: body.subject, action: { name: "search" }, resource, context: body.context });
    return { results: [] };
  }
  const decisions = await evaluateMany(deps, requests);
  return { results: names.filter((_, index) => decisions[index]?.decision).map((name) => ({ name })) };
}
