// Publishing one Mastodon item: media uploaded first (POST /api/v2/media, polled while the instance
// processes it), then POST /api/v1/statuses with the item's Idempotency-Key (a reply for later items).
import { expectJson, responseDetails } from "../http.ts";
import { stringList } from "../text.ts";
import {
  ProviderError,
  type DestinationRef,
  type MediaItem,
  type PublishedItem,
  type PublishItemInput,
} from "../types.ts";
import type { MastodonDeps } from "./adapter.ts";

/** One call to the instance; non-2xx answers are thrown as the adapter classifies them. */
export type MastodonCall = (input: {
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
}) => Promise<Response>;

/** The publishing half of the Mastodon adapter. */
export function createMastodonPublisher(
  deps: MastodonDeps,
  call: MastodonCall,
): { publishItem(input: PublishItemInput): Promise<PublishedItem> } {
  return {
    async publishItem(input: PublishItemInput): Promise<PublishedItem> {
      const { destination } = input;
      const mediaIds: string[] = [];
      for (const media of input.media) mediaIds.push(await uploadMedia(deps, call, { destination, media }));
      const language =
        typeof input.options.language === "string"
          ? input.options.language
          : stringList(input.options.languages)[0];
      const operation = "POST /api/v1/statuses";
      const response = await call({
        operation,
        url: `${base(destination.origin)}/api/v1/statuses`,
        init: {
          method: "POST",
          headers: {
            ...bearer(destination),
            "content-type": "application/json",
            "idempotency-key": input.idempotencyKey,
          },
          body: JSON.stringify({
            status: input.text,
            media_ids: mediaIds,
            in_reply_to_id: input.parent?.providerObjectId ?? undefined,
            visibility: "public",
            language,
          }),
        },
        idempotent: true, // Idempotency-Key: the same key returns the same status
      });
      const status = await expectJson({ operation, response });
      const id = String(status.id);
      return {
        providerObjectId: id,
        url:
          typeof status.url === "string"
            ? status.url
            : `${base(destination.origin)}/@${destination.handle}/${id}`,
        extra: { id, uri: status.uri ?? null },
        provider: {
          operation,
          requestId: responseDetails({ operation, response }).requestId,
          statusCode: response.status,
        },
      };
    },
  };
}

/** Uploads one media item and waits (polling) until the instance has processed it; its attachment id. */
async function uploadMedia(
  deps: MastodonDeps,
  call: MastodonCall,
  input: { destination: DestinationRef; media: MediaItem },
): Promise<string> {
  const pollIntervalMs = deps.mediaPollIntervalMs ?? 1000;
  const maxPolls = deps.mediaMaxPolls ?? 60;
  const { destination, media } = input;
  const form = new FormData();
  form.append("file", new Blob([await media.read()], { type: media.contentType }), fileName(media));
  if (media.altText) form.append("description", media.altText);
  const uploaded = await call({
    operation: "POST /api/v2/media",
    url: `${base(destination.origin)}/api/v2/media`,
    init: { method: "POST", headers: bearer(destination), body: form },
    idempotent: true, // an unattached upload is invisible and cleaned up by the instance
  });
  const attachment = await expectJson({ operation: "POST /api/v2/media", response: uploaded });
  const id = String(attachment.id);
  if (uploaded.status === 200 && attachment.url) return id;
  for (let poll = 0; poll < maxPolls; poll++) {
    await sleep(pollIntervalMs);
    const operation = "GET /api/v1/media/{id}";
    const response = await call({
      operation,
      url: `${base(destination.origin)}/api/v1/media/${encodeURIComponent(id)}`,
      init: { headers: bearer(destination) },
      idempotent: true,
    });
    if (response.status === 200 && (await expectJson({ operation, response })).url) return id;
  }
  throw new ProviderError(
    "transient",
    `media ${media.assetId} was still processing after ${maxPolls} polls`,
    { operation: "GET /api/v1/media/{id}" },
  );
}

export function bearer(destination: DestinationRef): Record<string, string> {
  return { authorization: `Bearer ${String(destination.credentials.accessToken ?? "")}` };
}

export function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}

function fileName(media: MediaItem): string {
  const extension = media.contentType.split("/")[1]?.split(/[+;]/)[0] ?? "bin";
  return `${media.assetId}.${extension}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
