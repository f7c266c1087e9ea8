/** Every scope of the contract, in its order. */
export const ALL_SCOPES = [
  "workspaces:read",
  "workspaces:write",
  "assets:read",
  "assets:write",
  "destinations:read",
  "destinations:write",
  "notifications:read",
  "notifications:write",
  "posts:read",
  "posts:write",
  "posts:approve",
  "webhooks:read",
  "webhooks:write",
  "team:read",
  "team:write",
  "audit:read",
  "feedback:write",
  "billing:read",
  "billing:write",
] as const;

/** One permission a credential may hold. */
export type Scope = (typeof ALL_SCOPES)[number];

/** What a route requires: a scope, or just any valid credential. */
export type RouteScope = Scope | "authenticated";

/** Narrows an arbitrary string to a scope. */
export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}
