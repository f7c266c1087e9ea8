import type { Actor } from "../../core/actor.ts";
import { ALL_SCOPES, type Scope } from "../../core/scopes.ts";

/** A person's role in an account. */
export type Role = "owner" | "admin" | "member";

/**
 * What each role may do, as scopes: the dashboard acts with these, and a key a person creates can hold
 * no scope beyond them. Owners do everything; admins all but change billing; members publish (posts,
 * assets) and read the rest of their workspaces' setup.
 */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: ALL_SCOPES,
  admin: ALL_SCOPES.filter((s) => s !== "billing:write"),
  member: [
    "workspaces:read",
    "assets:read",
    "assets:write",
    "destinations:read",
    "notifications:read",
    "posts:read",
    "posts:write",
    "webhooks:read",
    "team:read",
    "feedback:write",
  ],
};

/** Whether a role may do what a scope allows. */
export function roleAllows(role: Role, scope: Scope): boolean {
  return ROLE_SCOPES[role].includes(scope);
}

/** The actor of a signed-in person: their role's scopes, every workspace of the account, live. */
export function sessionActor(
  session: { id: string; accountId: string; email: string; role: Role; expiresAt: number },
  requestId: string,
): Actor {
  return {
    kind: "session",
    credentialId: session.id,
    accountId: session.accountId,
    prefix: "",
    name: session.email,
    environment: "live",
    scopes: [...ROLE_SCOPES[session.role]],
    workspaceAccessMode: "all",
    workspaceIds: [],
    expiresAt: session.expiresAt,
    requestId,
  };
}
