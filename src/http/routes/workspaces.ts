import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listWorkspaces } from "../../modules/workspaces/repo.ts";
import { createWorkspace, patchWorkspace, presentWorkspace } from "../../modules/workspaces/service.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";
import {
  CreateWorkspaceBody,
  ListWorkspacesQuery,
  PatchWorkspaceBody,
  Workspace,
} from "./workspaces-schemas.ts";

/** GET /workspaces: those the key can use (all of the account's, or the selected ones). */
async function listUsableWorkspaces(
  h: Herald,
  { actor, request, query }: RouteContext<unknown, Static<typeof ListWorkspacesQuery>>,
) {
  const scope = `workspaces:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const onlyIds = actor.workspaceAccessMode === "selected" ? actor.workspaceIds : null;
  const rows = await listWorkspaces(h.db, actor.accountId, onlyIds, page.afterId, page.limit);
  return pageResponse(h, request, rows, page, scope, presentWorkspace);
}

function create(h: Herald, { actor, request, body }: RouteContext<Static<typeof CreateWorkspaceBody>>) {
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
    resourceResponse(presentWorkspace(await createWorkspace({ h, actor, input: body })), 201),
  );
}

function getWorkspace(_h: Herald, c: RouteContext) {
  return resourceResponse(presentWorkspace(workspaceOf(c)));
}

async function patch(
  h: Herald,
  { actor, params, body, request }: RouteContext<Static<typeof PatchWorkspaceBody>>,
) {
  const row = await patchWorkspace({
    h,
    actor,
    workspaceId: params.workspace_id!,
    input: body,
    ifMatch: request.headers.get("if-match"),
  });
  return resourceResponse(presentWorkspace(row));
}

const tag = "Workspaces";
const doc = {
  list: operation({
    scope: "authenticated",
    operationId: "listWorkspaces",
    summary: "List the workspaces the API key can use",
    description:
      "All of the account's workspaces, or the ones selected for the key; paged with `limit` " +
      "and `after`.",
    tag,
  }),
  create: operation({
    scope: "workspaces:write",
    operationId: "createWorkspace",
    summary: "Create a workspace",
    description:
      "Creates a workspace with a name and an IANA time zone (UTC when none is given), which " +
      "the queue and local dates use.",
    tag,
    idempotency: "optional",
  }),
  get: operation({
    scope: "workspaces:read",
    operationId: "getWorkspace",
    summary: "Get a workspace",
    description: "One workspace: its name and time zone.",
    tag,
    errors: [404],
  }),
  patch: operation({
    scope: "workspaces:write",
    operationId: "updateWorkspace",
    summary: "Rename a workspace or change its time zone",
    description:
      "Changes the name, the time zone, whether posts need approval, or link tracking " +
      "(`link_tracking`: the fields sent are merged into the stored ones; when enabled, URLs of posts " +
      "created afterwards are published as short links that count clicks and redirect with the UTM " +
      "presets). Send If-Match with the ETag you read to refuse a change made since (412).",
    tag,
    errors: [404],
    ifMatch: "optional",
  }),
};

/** Workspaces: list the usable ones, create, get, patch. */
export function workspaceRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .get("/workspaces", handler(h, listUsableWorkspaces), {
      ...doc.list,
      query: ListWorkspacesQuery,
      response: { 200: listingSchema(Workspace) },
    })
    .post("/workspaces", handler(h, create), {
      ...doc.create,
      parse: JSON_PARSER,
      body: CreateWorkspaceBody,
      response: { 201: Workspace },
    })
    .get("/workspaces/:workspace_id", handler(h, getWorkspace), {
      ...doc.get,
      params: WorkspaceParams,
      response: { 200: Workspace },
    })
    .patch("/workspaces/:workspace_id", handler(h, patch), {
      ...doc.patch,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: PatchWorkspaceBody,
      response: { 200: Workspace },
    });
}
