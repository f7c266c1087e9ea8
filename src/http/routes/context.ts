import type { Actor } from "../../core/actor.ts";
import type { WorkspaceRow } from "../../modules/workspaces/repo.ts";

/**
 * What a named route handler reads of Elysia's context: the rails' actor and workspace, the request,
 * and the validated parts of the request (typed by the route's schemas, `Static<typeof Schema>`).
 */
export interface RouteContext<
  Body = unknown,
  Query = Record<string, string | undefined>,
  Params = Record<string, string>,
> {
  actor: Actor;
  /** Set on routes under /workspaces/{workspace_id}, already checked for the caller. */
  workspace: WorkspaceRow | undefined;
  request: Request;
  body: Body;
  query: Query;
  params: Params;
}

/** The context of a route under /workspaces/{workspace_id}, whose workspace the rails have checked. */
export function workspaceOf(c: { workspace: WorkspaceRow | undefined }): WorkspaceRow {
  return c.workspace!;
}
