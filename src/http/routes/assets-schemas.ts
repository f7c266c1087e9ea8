import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { MAX_PARTS, MIN_PART_SIZE } from "../../modules/assets/parts.ts";
import { Deleted } from "./common-schemas.ts";

/** A stored image or video. */
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

/** A started multipart upload: where and how to send its parts. */
export const AssetUpload = t.Object(
  {
    id: t.String(),
    object: t.Literal("asset_upload"),
    asset_id: t.String(),
    protocol: t.Literal("multipart"),
    part_size: Type.Integer({ minimum: MIN_PART_SIZE }),
    parts: t.Array(
      t.Object(
        {
          part_number: Type.Integer({ minimum: 1 }),
          upload_url: t.String(),
          required_headers: t.Record(t.String(), t.String()),
        },
        { title: "AssetUploadPart" },
      ),
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

/** Body of POST /asset-uploads. */
export const CreateUploadBody = t.Object(
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
  {
    title: "CreateAssetUploadRequest",
    additionalProperties: false,
    examples: [
      {
        kind: "card",
        file_name: "launch.png",
        content_type: "image/png",
        byte_size: 48213,
        parts: [{ part_number: 1, checksum_crc64nvme: "yZNbHw1qTxo=" }],
      },
    ],
  },
);

/** Body of completing an upload. */
export const CompleteUploadBody = t.Object(
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
  {
    title: "CompleteAssetUploadRequest",
    additionalProperties: false,
    examples: [
      {
        byte_size: 48213,
        checksum_crc64nvme: "yZNbHw1qTxo=",
        parts: [
          { part_number: 1, etag: '"9b2cf535f27731c974343645a3985328"', checksum_crc64nvme: "yZNbHw1qTxo=" },
        ],
      },
    ],
  },
);

export const AssetParams = t.Object({ workspace_id: t.String(), asset_id: t.String() });
export const UploadParams = t.Object({ workspace_id: t.String(), upload_id: t.String() });

/** Query of GET one asset. */
export const IncludeQuery = t.Object({ include: t.Optional(t.Literal("download")) });

/** Query of the asset listing. */
export const ListAssetsQuery = t.Object({
  limit: t.Optional(t.String()),
  after: t.Optional(t.String()),
  include: t.Optional(t.Literal("download")),
});

/** The answer of DELETE one asset. */
export const DeletedAsset = Deleted("asset");

/** Query of the signed transfer URLs (part uploads on local storage, downloads). */
export const SignedQuery = t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) });
