import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { MAX_PARTS, MIN_PART_SIZE } from "../../modules/assets/parts.ts";
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

export const Asset = t.Object(
  {
    id: t.String(),
    object: t.Literal("asset"),
    type: t.Union([t.Literal("card"), t.Literal("video"), t.Literal("poster")]),
    label: t.String(),
    dimensions: t.Union([t.String(), t.Null()]),
    width: t.Union([Type.Integer({ minimum: 1 }), t.Null()]),
    height: t.Union([Type.Integer({ minimum: 1 }), t.Null()]),
    duration_sec: t.Union([Type.Integer({ minimum: 0 }), t.Null()]),
    format: t.Union([t.String(), t.Null()]),
    byte_size: Type.Integer({ minimum: 0 }),
    content_type: t.String(),
    status: t.Union([t.Literal("pending_upload"), t.Literal("ready")]),
    checksum: t.Union([t.Object({ algorithm: t.String(), value: t.String() }), t.Null()]),
    inspected_at: t.Union([Timestamp, t.Null()]),
    retention: t.Object({ policy: t.String(), reusable: t.Boolean() }),
    created_at: Timestamp,
    download_url: t.Optional(t.String()),
    download_url_expires_at: t.Optional(Timestamp),
  },
  { title: "Asset" },
);

export const AssetUpload = t.Object(
  {
    id: t.String(),
    object: t.Literal("asset_upload"),
    asset_id: t.String(),
    protocol: t.Literal("multipart"),
    part_size: Type.Integer({ minimum: MIN_PART_SIZE }),
    parts: t.Array(
      t.Object({
        part_number: Type.Integer({ minimum: 1 }),
        upload_url: t.String(),
        required_headers: t.Record(t.String(), t.String()),
      }),
      { minItems: 1, maxItems: MAX_PARTS },
    ),
    byte_size: Type.Integer({ minimum: 1 }),
    expires_at: Timestamp,
  },
  { title: "AssetUpload" },
);

const Checksum = t.String({
  minLength: 1,
  maxLength: 64,
  description: "CRC64NVME: base64 of the 8 big-endian bytes",
});

const CreateUploadBody = t.Object(
  {
    kind: t.Union([t.Literal("card"), t.Literal("video"), t.Literal("poster")]),
    file_name: t.String({ minLength: 1, maxLength: 500 }),
    content_type: t.String({ minLength: 1, maxLength: 200 }),
    byte_size: Type.Integer({ minimum: 1 }),
    part_size: t.Optional(
      Type.Integer({
        minimum: MIN_PART_SIZE,
        description: "If given, must equal the part-size rule's value for byte_size",
      }),
    ),
    parts: t.Array(
      t.Object(
        { part_number: Type.Integer({ minimum: 1 }), checksum_crc64nvme: Checksum },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PARTS },
    ),
  },
  { additionalProperties: false },
);

const CompleteUploadBody = t.Object(
  {
    byte_size: Type.Integer({ minimum: 1 }),
    checksum_crc64nvme: Checksum,
    parts: t.Array(
      t.Object(
        {
          part_number: Type.Integer({ minimum: 1 }),
          etag: t.String({ minLength: 1, maxLength: 200 }),
          checksum_crc64nvme: Checksum,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PARTS },
    ),
  },
  { additionalProperties: false },
);

const WorkspaceParams = t.Object({ workspace_id: t.String() });
const AssetParams = t.Object({ workspace_id: t.String(), asset_id: t.String() });
const IncludeQuery = t.Object({ include: t.Optional(t.Literal("download")) });
const tag = "Assets";

/** Assets under /v1/workspaces/{id}: multipart uploads, listing, get, delete. */
export function assetRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post(
      "/asset-uploads",
      ({ actor, workspace: ws, request, body }) => {
        const workspace = ws!;
        return runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () =>
          resourceResponse(await createUpload({ h, actor, workspace, input: body }), 201),
        );
      },
      {
        ...operation({
          scope: "assets:write",
          summary: "Start a multipart upload (reserves the asset)",
          tag,
          errors: [404],
          idempotency: "required",
          description:
            "part_size is 5,242,880, or the smallest multiple of 1 MiB that fits in 10,000 parts; send ceil(byte_size / part_size) parts, each with its CRC64NVME.",
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: CreateUploadBody,
        response: { 201: AssetUpload },
      },
    )
    .post(
      "/asset-uploads/:upload_id/complete",
      ({ actor, request, params, body }) => {
        return runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () =>
          resourceResponse(
            presentAsset(
              await completeUpload({
                h,
                actor,
                workspaceId: params.workspace_id,
                uploadId: params.upload_id,
                input: body,
              }),
            ),
          ),
        );
      },
      {
        ...operation({
          scope: "assets:write",
          summary: "Complete an upload: check, assemble and inspect the file",
          tag,
          errors: [404],
          idempotency: "required",
        }),
        parse: JSON_PARSER,
        params: t.Object({ workspace_id: t.String(), upload_id: t.String() }),
        body: CompleteUploadBody,
        response: { 200: Asset },
      },
    )
    .get(
      "/assets",
      async ({ actor, workspace: ws, request, query }) => {
        const workspace = ws!;
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
      },
      {
        ...operation({
          scope: "assets:read",
          summary: "List assets (include=download adds five-minute download URLs)",
          tag,
          errors: [404],
        }),
        params: WorkspaceParams,
        query: t.Object({
          limit: t.Optional(t.String()),
          after: t.Optional(t.String()),
          include: t.Optional(t.Literal("download")),
        }),
        response: { 200: listingSchema(Asset) },
      },
    )
    .get(
      "/assets/:asset_id",
      async ({ params, query }) => {
        return resourceResponse(
          await assetResource(
            h,
            await requireAsset(h, params.workspace_id, params.asset_id),
            query.include === "download",
          ),
        );
      },
      {
        ...operation({ scope: "assets:read", summary: "Get an asset", tag, errors: [404] }),
        params: AssetParams,
        query: IncludeQuery,
        response: { 200: Asset },
      },
    )
    .delete(
      "/assets/:asset_id",
      async ({ actor, request, params }) => {
        return runIdempotent(
          h,
          { accountId: actor.accountId, request, body: null, required: false },
          async () => {
            const asset = await deleteAsset({
              h,
              actor,
              workspaceId: params.workspace_id,
              id: params.asset_id,
            });
            return new Response(JSON.stringify({ id: asset.id, object: "asset", deleted: true }), {
              headers: { "content-type": "application/json" },
            });
          },
        );
      },
      {
        ...operation({
          scope: "assets:write",
          summary: "Delete an asset (refused while an unfinished post uses it)",
          tag,
          errors: [404, 409],
          idempotency: "optional",
        }),
        params: AssetParams,
        response: { 200: t.Object({ id: t.String(), object: t.Literal("asset"), deleted: t.Literal(true) }) },
      },
    );
}

const SignedQuery = t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) });

/**
 * The signed, unauthenticated routes outside /v1: `PUT /uploads/{upload_id}/parts/{n}` (a part on
 * local storage; the raw body streams to disk, never parsed) and `GET /downloads/{asset_id}`.
 */
export function assetTransferRoutes(h: Herald) {
  return new Elysia()
    .put(
      "/uploads/:upload_id/parts/:part_number",
      async ({ params, query, request }) => {
        const part = await receivePart(h, params.upload_id, params.part_number, query, request);
        return new Response(JSON.stringify(part), {
          headers: { "content-type": "application/json", etag: part.etag },
        });
      },
      { parse: "none", query: SignedQuery, detail: { hide: true } },
    )
    .get("/downloads/:asset_id", ({ params, query }) => downloadAsset(h, params.asset_id, query), {
      query: SignedQuery,
      detail: { hide: true },
    });
}
