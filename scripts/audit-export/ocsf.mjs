// Audit events (GET /admin/audit's items) as OCSF 1.2.0 events of the Identity & Access Management category:
// Authentication (class 3002) for sign-ins, sign-outs and sessions ended, Account Change (class 3001) for what changes
// an account, and the risk gate's decision on a sign-in (`signin.risk`, below). Each type is mapped once, in the tables below; a type of neither class (a hook call, an OAuth2 client
// registered, a webhook changed) has no OCSF event here and is counted instead (`--format jsonl` keeps every event).
// test/tooling/audit-export.test.ts validates the output against the JSON Schema derived from the OCSF 1.2.0 release
// files (test/fixtures/ocsf-1.2.0/).

export const OCSF_VERSION = "1.2.0";
const IAM = { uid: 3, name: "Identity & Access Management" };

/** class_uid → its name and its activities' names (OCSF 1.2.0 events/iam/*.json). */
const CLASSES = {
  3001: {
    name: "Account Change",
    activities: {
      1: "Create",
      2: "Enable",
      3: "Password Change",
      4: "Password Reset",
      5: "Disable",
      6: "Delete",
      9: "Lock",
      10: "MFA Factor Enable",
      11: "MFA Factor Disable",
      99: "Other",
    },
  },
  3002: { name: "Authentication", activities: { 1: "Logon", 2: "Logoff", 99: "Other" } },
};

/** type → [class_uid, activity_id, the activity's own name for Other (99)]. */
const TYPES = {
  "signin.success": [3002, 1],
  "signin.failure": [3002, 1],
  "signin.failure.repeated": [3002, 1],
  "oauth2.assertion": [3002, 1],
  // The risk gate's decision on one sign-in (docs/risk.md): an Authentication event, not a Detection Finding (2004).
  // It is about one logon attempt (its user, address, device, outcome), so it sits in the same class as the
  // `signin.*` events a SIEM already correlates per user and address; most of these are a medium level let through
  // (a new device), which as findings would open an alert each. Its own activity (Other), not Logon: an allowed
  // sign-in is also its `signin.success`, and would be counted twice. A refusal is the Failure it is (status).
  "signin.risk": [3002, 99, "Risk Assessment"],
  "admin.console.sign-in": [3002, 1],
  "admin.console.sign-in-failed": [3002, 1],
  elevation: [3002, 99, "Elevation"],
  "refresh.replay": [3002, 99, "Refresh Token Replay"],
  "session.revoke": [3002, 2],
  "session.revoke-others": [3002, 2],
  "admin.session.revoke": [3002, 2],
  "admin.sessions.revoke-all": [3002, 2],
  "admin.console.sign-out": [3002, 2],
  "admin.console.session-end": [3002, 2],
  signup: [3001, 1],
  "admin.user.create": [3001, 1],
  "password.change": [3001, 3],
  "password.reset": [3001, 4],
  "admin.user.send-reset": [3001, 4],
  "admin.user.disable": [3001, 5],
  "account.delete": [3001, 6],
  "admin.user.delete": [3001, 6],
  "signin.locked": [3001, 9],
  "mfa.enabled": [3001, 10],
  "security-key.added": [3001, 10],
  "mfa.disabled": [3001, 11],
  "admin.security-key.delete": [3001, 11],
  "signin.unlocked": [3001, 99, "Unlock"],
  "admin.user.unlock": [3001, 99, "Unlock"],
  "admin.user.update": [3001, 99, "Update"],
  "email.change": [3001, 99, "Email Change"],
  "phone.change": [3001, 99, "Phone Change"],
  "provider.linked": [3001, 99, "Provider Linked"],
  "provider.unlinked": [3001, 99, "Provider Unlinked"],
  "pat.created": [3001, 99, "Access Token Created"],
  "pat.revoked": [3001, 99, "Access Token Revoked"],
  "scim.user.create": [3001, 1],
  "scim.user.replace": [3001, 99, "Update"],
  "scim.user.update": [3001, 99, "Update"],
  "scim.user.delete": [3001, 6],
};

/** A risk level (src/risk/score.ts) as OCSF's severity: the level the gate gave the attempt. */
const RISK_SEVERITY = { low: [2, "Low"], medium: [3, "Medium"], high: [4, "High"] };

/**
 * The risk decision's fields: severity from its level, `status_detail` saying level, decision and who decided, and the
 * signals as an enrichment (the base event's place for context an assessment added; Authentication 1.2.0 has no
 * risk_level of its own). Nothing for other types, or a detail without a known level.
 */
function riskOf(event) {
  const detail = event.detail ?? {};
  const severity = event.type === "signin.risk" ? RISK_SEVERITY[detail.level] : undefined;
  if (!severity) return {};
  const reasons = Array.isArray(detail.reasons) ? detail.reasons : [];
  return {
    severity_id: severity[0],
    severity: severity[1],
    status_detail: `risk ${detail.level}: ${detail.decision} by ${detail.by}${reasons.length ? ` (${reasons.join(", ")})` : ""}`,
    enrichments: [
      {
        name: "risk_level",
        value: detail.level,
        type: "risk",
        provider: detail.by === "hook" ? "risk hook" : "risk policy",
        data: {
          decision: detail.decision,
          by: detail.by,
          reasons,
          ...(detail.hookReason !== undefined ? { hook_reason: detail.hookReason } : {}),
          signals: detail.signals ?? {},
        },
      },
    ],
  };
}

/** The user an event is about: its id, else the address a failed sign-in typed, else unknown (OCSF needs one). */
function subjectOf(event) {
  const email = typeof event.detail?.email === "string" ? event.detail.email : undefined;
  if (event.userId)
    return { uid: event.userId, type_id: 1, type: "User", ...(email ? { email_addr: email } : {}) };
  if (email) return { name: email, email_addr: email, type_id: 1, type: "User" };
  return { name: "unknown", type_id: 0, type: "Unknown" };
}

/** Who acted (src/audit/actor.ts), as OCSF's actor: a person as `user`, a program as `app_name`. */
function actorOf(event) {
  const { type, name } = event.actor ?? { type: "user" };
  switch (type) {
    case "admin":
      return { user: { name: name ?? "admin", type_id: 2, type: "Admin" } };
    case "impersonator":
      // The person acting as the user (RFC 8693 act.sub); the event's `user` is the one impersonated.
      return {
        user: { name: name ?? "impersonator", type_id: 2, type: "Admin" },
        session: { issuer: "impersonation" },
      };
    case "worker":
      return { app_name: name ?? "worker" };
    case "scim":
      return { app_name: "scim", ...(name ? { app_uid: name } : {}) };
    case "system":
      return { app_name: "edge-auth" };
    default:
      return { user: subjectOf(event) };
  }
}

/** One event as OCSF, or null for a type of neither class. */
export function ocsfEventOf(event, product) {
  const mapped = TYPES[event.type];
  if (!mapped) return null;
  const [classUid, activityId, otherName] = mapped;
  const known = CLASSES[classUid];
  const failed = event.outcome === "failure";
  return {
    category_uid: IAM.uid,
    category_name: IAM.name,
    class_uid: classUid,
    class_name: known.name,
    activity_id: activityId,
    activity_name: otherName ?? known.activities[activityId],
    type_uid: classUid * 100 + activityId,
    type_name: `${known.name}: ${otherName ?? known.activities[activityId]}`,
    time: Date.parse(event.at),
    severity_id: failed ? 3 : 1,
    severity: failed ? "Medium" : "Informational",
    status_id: failed ? 2 : 1,
    status: failed ? "Failure" : "Success",
    status_code: event.reason,
    message: event.type,
    metadata: {
      version: OCSF_VERSION,
      uid: event.id,
      log_name: "audit",
      product: {
        name: product.name,
        vendor_name: product.name,
        ...(product.url ? { url_string: product.url } : {}),
      },
    },
    user: subjectOf(event),
    actor: actorOf(event),
    ...(event.ip ? { src_endpoint: { ip: event.ip } } : {}),
    ...(event.userAgent ? { http_request: { user_agent: event.userAgent } } : {}),
    // Authentication names where the user signed in (at least one of service, dst_endpoint): this service.
    ...(classUid === 3002
      ? { service: { name: product.name, ...(product.url ? { uid: product.url } : {}) } }
      : {}),
    ...riskOf(event),
    unmapped: { type: event.type, actor: event.actor, detail: event.detail },
  };
}
