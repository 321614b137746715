/**
 * What the rest of the service may use of permissions (the service binding's `check`, the console): the core
 * evaluation and the relationships' writes. Everything else in src/permissions/ is internal to it.
 */
export { FRESHNESS_MS } from "./active-set";
export { type CheckManyOptions, check, checkMany } from "./checks";
export {
  type Decision,
  type EvaluationsSemantic,
  evaluate,
  evaluateMany,
  forgetRelationships,
  type PermissionDeps,
  SEMANTICS,
} from "./evaluate";
export { type EvaluationRequest, PermissionRequestError } from "./request";
export { addRelationship, type Relationship, removeRelationship } from "./store";
