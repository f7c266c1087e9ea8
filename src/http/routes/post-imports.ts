import type { Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { importPosts, type CreateRequestCheck } from "../../modules/post-imports/import.ts";
import { operation } from "../docs.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { fieldErrorsFromSchemaIssues } from "../validation.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";
import { PostImport, PostImportBody } from "./post-imports-schemas.ts";
import { CreatePostsBody } from "./posts-schemas.ts";

/** Create Post's request schema, checked as the rails check a Create Post body. */
const checkCreateRequest: CreateRequestCheck = (input) =>
  fieldErrorsFromSchemaIssues(
    [...Value.Errors(CreatePostsBody, input)] as unknown as Parameters<typeof fieldErrorsFromSchemaIssues>[0],
    "body",
  );

/**
 * POST /post-imports: a dry run answers 200 (no key needed, nothing stored); an import needs a key and
 * answers 201, or 202 when its posts wait for approval.
 */
function importPostSet(h: Herald, c: RouteContext<Static<typeof PostImportBody>>) {
  const { actor, request, body } = c;
  const dryRun = body.dry_run === true;
  // A dry run writes and rolls back in a transaction of its own, never inside the key's.
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: !dryRun, atomic: !dryRun },
    async () => {
      const { result, awaitingApproval } = await importPosts({
        h,
        actor,
        workspace: workspaceOf(c),
        input: body,
        checkRequest: checkCreateRequest,
      });
      return new Response(JSON.stringify(result), {
        status: dryRun ? 200 : awaitingApproval ? 202 : 201,
        headers: { "content-type": "application/json" },
      });
    },
  );
}

const doc = operation({
  scope: "posts:write",
  operationId: "importPosts",
  summary: "Import posts from a CSV file (with a dry run)",
  tag: "Posts",
  errors: [404, 409, 422],
  idempotency: "optional",
  description:
    "Each data row of the CSV is one post (row 1 names the columns: group, when, time_zone, channel, " +
    "destination_id, body, media, first_comment); rows with the same `group` form one post group. " +
    "Every row is judged by Create Post's own rules and codes. `dry_run: true` answers 200 with every " +
    "row judged and stores nothing. Otherwise (Idempotency-Key required, `confirmed: true` when a row " +
    "publishes or schedules) all rows are stored in one transaction (201; 202 when they wait for " +
    "approval) or none: 422 `public_unpublishable` whose `errors` point at `/rows/<row>/<column>`, " +
    "with `rows` beside them. Rows are numbered as a spreadsheet shows them (the header is row 1).",
});

/** The CSV import of posts. */
export function postImportRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post("/post-imports", handler(h, importPostSet), {
      ...doc,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: PostImportBody,
      response: { 200: PostImport, 201: PostImport, 202: PostImport },
    });
}
