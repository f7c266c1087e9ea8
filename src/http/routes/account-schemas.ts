import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { ALL_SCOPES } from "../../core/scopes.ts";

/** The account, with the calling credential's context. */
export const Account = t.Object(
  {
    id: t.String(),
    object: t.Literal("account"),
    name: t.String(),
    authentication: t.Object(
      {
        credential_id: t.String(),
        prefix: t.String(),
        name: t.String(),
        environment: t.Union([t.Literal("live"), t.Literal("test")]),
        workspace_access_mode: t.Union([t.Literal("all"), t.Literal("selected")]),
        scopes: t.Array(t.Union(ALL_SCOPES.map((s) => t.Literal(s)))),
        expires_at: t.Union([Timestamp, t.Null()]),
      },
      { title: "AccountAuthentication" },
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Account" },
);

/** The answer of POST /me/revoke. */
export const RevokedKey = t.Object(
  { id: t.String(), object: t.Literal("api_key"), revoked: t.Literal(true) },
  { title: "RevokedApiKey" },
);

/** A record of the audit log: who changed what. */
export const AuditRecord = t.Object(
  {
    id: t.String(),
    object: t.Literal("audit_record"),
    action: t.String(),
    credential_id: t.Union([t.String(), t.Null()]),
    workspace_id: t.Union([t.String(), t.Null()]),
    target: t.Object({ type: t.String(), id: t.String() }),
    /** Herald's own id of the request (`req_…`). */
    request_id: t.Union([t.String(), t.Null()]),
    /** The caller's `Service-Request-Id` of that request, as sent; null when none. */
    client_request_id: t.Union([t.String(), t.Null()]),
    created_at: Timestamp,
  },
  { title: "AuditRecord" },
);
