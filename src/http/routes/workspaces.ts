import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listWorkspaces } from "../../modules/workspaces/repo.ts";
import { createWorkspace, patchWorkspace, presentWorkspace } from "../../modules/workspaces/service.ts";

export const Workspace = t.Object(
  {
    id: t.String(),
    object: t.Literal("workspace"),
    name: t.String(),
    time_zone: t.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Workspace" },
);
const Name = t.String({
  minLength: 1,
  maxLength: 200,
  pattern: "\\S",
  description: "1 to 200 characters, not only spaces",
});
const TimeZone = t.String({ minLength: 1, maxLength: 64, description: "IANA time zone name" });
const PageQuery = t.Object({
  limit: t.Optional(t.String({ description: "1 to 100, default 25" })),
  after: t.Optional(t.String()),
});

/** Workspaces: list the usable ones, create, get, patch. */
export function workspaceRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .get(
      "/workspaces",
      async ({ actor, request, query }) => {
        const scope = `workspaces:${actor.credentialId}`;
        const page = parsePageQuery(h, query, scope);
        const onlyIds = actor.workspaceAccessMode === "selected" ? actor.workspaceIds : null;
        const rows = await listWorkspaces(h.db, actor.accountId, onlyIds, page.afterId, page.limit);
        return pageResponse(h, request, rows, page, scope, presentWorkspace);
      },
      {
        ...operation({
          scope: "authenticated",
          summary: "List the workspaces the API key can use",
          tag: "Workspaces",
        }),
        query: PageQuery,
        response: { 200: listingSchema(Workspace) },
      },
    )
    .post(
      "/workspaces",
      ({ actor, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
          resourceResponse(presentWorkspace(await createWorkspace({ h, actor, input: body })), 201),
        ),
      {
        ...operation({
          scope: "workspaces:write",
          summary: "Create a workspace",
          tag: "Workspaces",
          idempotency: "optional",
        }),
        parse: JSON_PARSER,
        body: t.Object({ name: Name, time_zone: t.Optional(TimeZone) }, { additionalProperties: false }),
        response: { 201: Workspace },
      },
    )
    .get("/workspaces/:workspace_id", ({ workspace }) => resourceResponse(presentWorkspace(workspace!)), {
      ...operation({
        scope: "workspaces:read",
        summary: "Get a workspace",
        tag: "Workspaces",
        errors: [404],
      }),
      params: t.Object({ workspace_id: t.String() }),
      response: { 200: Workspace },
    })
    .patch(
      "/workspaces/:workspace_id",
      async ({ actor, params, body, request }) => {
        const row = await patchWorkspace({
          h,
          actor,
          workspaceId: params.workspace_id,
          input: body,
          ifMatch: request.headers.get("if-match"),
        });
        return resourceResponse(presentWorkspace(row));
      },
      {
        ...operation({
          scope: "workspaces:write",
          summary: "Rename a workspace or change its time zone",
          tag: "Workspaces",
          errors: [404],
          ifMatch: "optional",
        }),
        parse: JSON_PARSER,
        params: t.Object({ workspace_id: t.String() }),
        body: t.Object(
          { name: t.Optional(Name), time_zone: t.Optional(TimeZone) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Workspace },
      },
    );
}
