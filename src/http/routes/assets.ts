import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { presentAsset } from "../../modules/assets/present.ts";
import {
  assetResource,
  completeUpload,
  createUpload,
  deleteAsset,
  downloadAsset,
  downloadLink,
  pageOfAssets,
  receivePart,
  requireAsset,
} from "../../modules/assets/service.ts";
import {
  Asset,
  AssetParams,
  AssetUpload,
  CompleteUploadBody,
  CreateUploadBody,
  DeletedAsset,
  IncludeQuery,
  ListAssetsQuery,
  SignedQuery,
  UploadParams,
} from "./assets-schemas.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import { handler, publicHandler, workspaceOf, type RouteContext } from "./context.ts";

type AssetContext<Query = unknown> = RouteContext<unknown, Query, Static<typeof AssetParams>>;

/** POST /asset-uploads: the key is required. */
function startUpload(h: Herald, c: RouteContext<Static<typeof CreateUploadBody>>) {
  const { actor, request, body } = c;
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () =>
    resourceResponse(await createUpload({ h, actor, workspace: workspaceOf(c), input: body }), 201),
  );
}

function finishUpload(
  h: Herald,
  c: RouteContext<Static<typeof CompleteUploadBody>, unknown, Static<typeof UploadParams>>,
) {
  const { actor, request, params, body } = c;
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () => {
    const asset = await completeUpload({
      h,
      actor,
      workspaceId: params.workspace_id,
      uploadId: params.upload_id,
      input: body,
    });
    return resourceResponse(presentAsset(asset));
  });
}

/** GET /assets: one page, with five-minute download URLs when asked. */
async function listAssetPage(h: Herald, c: RouteContext<unknown, Static<typeof ListAssetsQuery>>) {
  const { actor, request, query } = c;
  const workspace = workspaceOf(c);
  const scope = `assets:${workspace.id}:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await pageOfAssets(h, workspace.id, page.afterId, page.limit);
  const links = new Map(
    query.include === "download"
      ? await Promise.all(
          rows.slice(0, page.limit).map(async (r) => [r.id, await downloadLink(h, r)] as const),
        )
      : [],
  );
  return pageResponse(h, request, rows, page, scope, (row) => presentAsset(row, links.get(row.id)));
}

async function getAsset(h: Herald, { params, query }: AssetContext<Static<typeof IncludeQuery>>) {
  const asset = await requireAsset(h, params.workspace_id, params.asset_id);
  return resourceResponse(await assetResource(h, asset, query.include === "download"));
}

function deleteOneAsset(h: Herald, { actor, request, params }: AssetContext) {
  return runIdempotent(h, { accountId: actor.accountId, request, body: null, required: false }, async () => {
    const asset = await deleteAsset({ h, actor, workspaceId: params.workspace_id, id: params.asset_id });
    return new Response(JSON.stringify({ id: asset.id, object: "asset", deleted: true }), {
      headers: { "content-type": "application/json" },
    });
  });
}

const tag = "Assets";
const doc = {
  startUpload: operation({
    scope: "assets:write",
    operationId: "createAssetUpload",
    summary: "Start a multipart upload (reserves the asset)",
    tag,
    errors: [404],
    idempotency: "required",
    description:
      "part_size is 5,242,880, or the smallest multiple of 1 MiB that fits in 10,000 parts; " +
      "send ceil(byte_size / part_size) parts, each with its CRC64NVME.",
  }),
  completeUpload: operation({
    scope: "assets:write",
    operationId: "completeAssetUpload",
    summary: "Complete an upload: check, assemble and inspect the file",
    description:
      "Call it once every part is uploaded, with each part's ETag and CRC64NVME and the whole " +
      "file's CRC64NVME. Herald checks the sizes and checksums, assembles the parts and " +
      "inspects the file (type, dimensions, duration); the answer is the finished asset.",
    tag,
    errors: [404],
    idempotency: "required",
  }),
  list: operation({
    scope: "assets:read",
    operationId: "listAssets",
    summary: "List assets (include=download adds five-minute download URLs)",
    description:
      "The workspace's assets in cursor order, paged with `limit` and `after`; " +
      "`include=download` adds to each a `download_url` valid for five minutes.",
    tag,
    errors: [404],
  }),
  get: operation({
    scope: "assets:read",
    operationId: "getAsset",
    summary: "Get an asset",
    description:
      "One asset: its type, size, dimensions, duration, checksum and retention. " +
      "`include=download` adds a `download_url` valid for five minutes.",
    tag,
    errors: [404],
  }),
  delete: operation({
    scope: "assets:write",
    operationId: "deleteAsset",
    summary: "Delete an asset (refused while an unfinished post uses it)",
    description:
      "Deletes the asset and its stored file. A post that has not finished publishing and uses " +
      "it makes this a 409; a published post keeps what the network already holds.",
    tag,
    errors: [404, 409],
    idempotency: "optional",
  }),
};

/** Assets under /v1/workspaces/{id}: multipart uploads, listing, get, delete. */
export function assetRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post("/asset-uploads", handler(h, startUpload), {
      ...doc.startUpload,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CreateUploadBody,
      response: { 201: AssetUpload },
    })
    .post("/asset-uploads/:upload_id/complete", handler(h, finishUpload), {
      ...doc.completeUpload,
      parse: JSON_PARSER,
      params: UploadParams,
      body: CompleteUploadBody,
      response: { 200: Asset },
    })
    .get("/assets", handler(h, listAssetPage), {
      ...doc.list,
      params: WorkspaceParams,
      query: ListAssetsQuery,
      response: { 200: listingSchema(Asset) },
    })
    .get("/assets/:asset_id", handler(h, getAsset), {
      ...doc.get,
      params: AssetParams,
      query: IncludeQuery,
      response: { 200: Asset },
    })
    .delete("/assets/:asset_id", handler(h, deleteOneAsset), {
      ...doc.delete,
      params: AssetParams,
      response: { 200: DeletedAsset },
    });
}

/** PUT a part on local storage: the raw body streams to disk, never parsed. */
async function putPart(
  h: Herald,
  c: {
    params: { upload_id: string; part_number: string };
    query: Static<typeof SignedQuery>;
    request: Request;
  },
) {
  const part = await receivePart(h, c.params.upload_id, c.params.part_number, c.query, c.request);
  return new Response(JSON.stringify(part), {
    headers: { "content-type": "application/json", etag: part.etag },
  });
}

/**
 * The signed, unauthenticated routes outside /v1: `PUT /uploads/{upload_id}/parts/{n}` (a part on
 * local storage; the raw body streams to disk, never parsed) and `GET /downloads/{asset_id}`.
 */
export function assetTransferRoutes(h: Herald) {
  return new Elysia()
    .put("/uploads/:upload_id/parts/:part_number", publicHandler(h, putPart), {
      parse: "none",
      query: SignedQuery,
      detail: { hide: true },
    })
    .get("/downloads/:asset_id", ({ params, query }) => downloadAsset(h, params.asset_id, query), {
      query: SignedQuery,
      detail: { hide: true },
    });
}
