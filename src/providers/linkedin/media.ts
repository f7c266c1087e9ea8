// LinkedIn media: images (`/rest/images` initialize + PUT) and videos (`/rest/videos` initialize,
// PUT each part collecting ETags, finalize), then their status until AVAILABLE. Uploads are not
// posts: an unattached image or video is invisible, so every call here is safe to repeat.
import { expectJson, isCutUpload } from "../http.ts";
import { accessTokenOf, linkedinCall, restHeaders } from "./api.ts";
import { ProviderError, type DestinationRef, type MediaItem, type ProviderDeps } from "../types.ts";

/** An uploaded image or video: its URN and which API holds it. */
export interface UploadedMedia {
  urn: string;
  kind: "image" | "video";
}

/** Where an upload stands: ready to attach, still processing, failed for good, or unknown to LinkedIn. */
export type MediaState = "available" | "processing" | "failed" | "missing";

/** Whether a media item goes to the Videos API (anything else is an image). */
export function isVideo(media: { contentType: string }): boolean {
  return media.contentType.startsWith("video/");
}

/** Uploads one media item owned by the destination (the author of the post it will be in). */
export async function uploadMedia(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  media: MediaItem;
}): Promise<UploadedMedia> {
  return isVideo(input.media) ? uploadVideo(input) : uploadImage(input);
}

async function uploadImage(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  media: MediaItem;
}): Promise<UploadedMedia> {
  const { deps, destination, media } = input;
  const bytes = await media.read(); // read first: unreadable media fails before anything is sent
  const token = accessTokenOf(destination);
  const operation = "POST /rest/images?action=initializeUpload";
  const response = await linkedinCall({
    deps,
    operation,
    url: `${base(destination.origin)}/rest/images?action=initializeUpload`,
    init: {
      method: "POST",
      headers: { ...restHeaders(deps, token), "content-type": "application/json" },
      body: JSON.stringify({ initializeUploadRequest: { owner: destination.externalId } }),
    },
    idempotent: true,
  });
  const value = (await expectJson({ operation, response })).value;
  const urn = stringOr(value?.image, operation, "image");
  await linkedinCall({
    deps,
    operation: "PUT image upload URL",
    url: stringOr(value?.uploadUrl, operation, "uploadUrl"),
    init: {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": media.contentType },
      body: bytes,
    },
    idempotent: true,
  });
  return { urn, kind: "image" };
}

async function uploadVideo(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  media: MediaItem;
}): Promise<UploadedMedia> {
  const { deps, destination, media } = input;
  const bytes = await media.read();
  const token = accessTokenOf(destination);
  const headers = { ...restHeaders(deps, token), "content-type": "application/json" };
  const operation = "POST /rest/videos?action=initializeUpload";
  const response = await linkedinCall({
    deps,
    operation,
    url: `${base(destination.origin)}/rest/videos?action=initializeUpload`,
    init: {
      method: "POST",
      headers,
      body: JSON.stringify({
        initializeUploadRequest: {
          owner: destination.externalId,
          fileSizeBytes: bytes.length,
          uploadCaptions: false,
          uploadThumbnail: false,
        },
      }),
    },
    idempotent: true,
  });
  const value = (await expectJson({ operation, response })).value;
  const urn = stringOr(value?.video, operation, "video");
  const instructions: unknown[] = Array.isArray(value?.uploadInstructions) ? value.uploadInstructions : [];
  if (instructions.length === 0) throw malformed(operation, "uploadInstructions");
  // Each instruction names a byte range and where to PUT it; the ETag of each answer names the part.
  const etags: string[] = [];
  for (const [index, instruction] of instructions.entries()) {
    const { uploadUrl, firstByte, lastByte } = instruction as Record<string, unknown>;
    if (
      typeof firstByte !== "number" ||
      typeof lastByte !== "number" ||
      firstByte < 0 ||
      lastByte < firstByte ||
      lastByte >= bytes.length
    )
      throw malformed(operation, `uploadInstructions[${index}] byte range`);
    const url = stringOr(uploadUrl, operation, `uploadInstructions[${index}].uploadUrl`);
    etags.push(await putPart({ deps, token, url, part: bytes.subarray(firstByte, lastByte + 1) }));
  }
  await linkedinCall({
    deps,
    operation: "POST /rest/videos?action=finalizeUpload",
    url: `${base(destination.origin)}/rest/videos?action=finalizeUpload`,
    init: {
      method: "POST",
      headers,
      body: JSON.stringify({
        finalizeUploadRequest: {
          video: urn,
          uploadToken: typeof value.uploadToken === "string" ? value.uploadToken : "",
          uploadedPartIds: etags,
        },
      }),
    },
    idempotent: true, // finalizing the same parts again cannot publish anything
  });
  return { urn, kind: "video" };
}

/**
 * PUTs one video part to its upload URL, on a connection of its own, and answers its ETag. LinkedIn's
 * Videos API gives each part its own upload URL for its byte range and finalizes with the ETags of
 * the parts: a part either arrived whole (it has an ETag) or not at all, and the same part PUT again
 * stands for it. So a part cut on the way (reset, timeout, 5xx) is sent again once, whole, by Herald,
 * never by the runtime behind its back; the parts already answered are not sent again.
 */
async function putPart(input: {
  deps: ProviderDeps;
  token: string;
  url: string;
  part: Uint8Array;
}): Promise<string> {
  const operation = "PUT video part upload URL";
  const send = () =>
    linkedinCall({
      deps: input.deps,
      operation,
      url: input.url,
      init: {
        method: "PUT",
        headers: { authorization: `Bearer ${input.token}`, "content-type": "application/octet-stream" },
        body: input.part,
      },
      idempotent: true,
      freshConnection: true,
    });
  let response: Response;
  try {
    response = await send();
  } catch (error) {
    if (!isCutUpload(error)) throw error;
    response = await send();
  }
  const etag = response.headers.get("etag");
  if (!etag) throw malformed(operation, "ETag header");
  return etag;
}

/**
 * Reads where an upload stands (`GET /rest/images/{urn}` or `/rest/videos/{urn}`). A 404 is
 * `missing`. A 403 on an image read is taken as `available`: whether member tokens may read image
 * status is not documented, images are ready within seconds, and LinkedIn itself refuses a post
 * whose image is not ready (a `rejected` failure, never a duplicate).
 */
export async function mediaState(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  media: UploadedMedia;
}): Promise<{ state: MediaState; reason: string | null }> {
  const { deps, destination, media } = input;
  const operation = `GET /rest/${media.kind}s/{urn}`;
  const forbiddenIsFine = media.kind === "image";
  const response = await linkedinCall({
    deps,
    operation,
    url: `${base(destination.origin)}/rest/${media.kind}s/${encodeURIComponent(media.urn)}`,
    init: { headers: restHeaders(deps, accessTokenOf(destination)) },
    idempotent: true,
    allow: forbiddenIsFine ? [403, 404] : [404],
  });
  if (response.status === 404) return { state: "missing", reason: null };
  if (response.status === 403) return { state: "available", reason: null };
  const body = await expectJson({ operation, response });
  const reason = typeof body.processingFailureReason === "string" ? body.processingFailureReason : null;
  switch (body.status) {
    case "AVAILABLE":
      return { state: "available", reason };
    case "PROCESSING_FAILED":
    case "FAILED":
      return { state: "failed", reason };
    default:
      return { state: "processing", reason }; // WAITING_UPLOAD, PROCESSING
  }
}

/**
 * Reads every upload once: `available` when all are, `processing` while any is, `missing` when
 * LinkedIn no longer knows one. Throws `rejected` when one failed processing (nothing was posted).
 */
export async function mediaRound(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  media: UploadedMedia[];
}): Promise<"available" | "processing" | "missing"> {
  let result: "available" | "processing" | "missing" = "available";
  for (const media of input.media) {
    const { state, reason } = await mediaState({ ...input, media });
    if (state === "failed")
      throw new ProviderError(
        "rejected",
        `LinkedIn could not process ${media.kind} ${media.urn}${reason ? `: ${reason}` : ""}`,
        { operation: `GET /rest/${media.kind}s/{urn}`, errorCode: "PROCESSING_FAILED" },
      );
    if (state === "missing") return "missing";
    if (state === "processing") result = "processing";
  }
  return result;
}

function stringOr(value: unknown, operation: string, field: string): string {
  if (typeof value === "string" && value !== "") return value;
  throw malformed(operation, field);
}

/** An answer without what the upload needs: nothing was posted, so trying again is safe. */
function malformed(operation: string, field: string): ProviderError {
  return new ProviderError("transient", `${operation}: LinkedIn's answer has no usable ${field}`, {
    operation,
  });
}

function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}
