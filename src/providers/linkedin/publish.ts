// Publishing one LinkedIn item: its images or video uploaded first (media.ts), then the post created
// through the versioned Posts API once LinkedIn has processed them. Media still processing makes the
// item pending; the status check creates the post (once) when all is AVAILABLE.
import { accessTokenOf, escapeLittleText, linkedinCall, restHeaders } from "./api.ts";
import { isVideo, mediaRound, uploadMedia, type UploadedMedia } from "./media.ts";
import { LINKEDIN_PAGE_PREFIX } from "./rules.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type PendingPublisher,
  type PublishedItem,
  type PublishItemInput,
  type PublishOutcome,
} from "../types.ts";

/** How often a post waiting for LinkedIn's media processing is checked again. */
export const LINKEDIN_RECHECK_MS = 30_000;
/** Media still processing after this long is given up on (`rejected`; nothing was posted). */
export const LINKEDIN_MAX_PROCESSING_MS = 2 * 60 * 60 * 1000;

/** The publishing half of the LinkedIn adapter. */
export function createLinkedInPublisher(deps: AdapterDeps): PendingPublisher {
  return {
    async publishItem(input: PublishItemInput): Promise<PublishOutcome> {
      const { destination } = input;
      if (input.parent)
        throw new ProviderError("rejected", "LinkedIn does not publish threads; only one item can be sent", {
          operation: "publishItem",
        });
      visibilityOf({ destination, options: input.options }); // refuses before anything is uploaded
      if (input.media.some(isVideo) && input.media.length > 1)
        throw new ProviderError("rejected", "a LinkedIn video goes alone, without other media", {
          operation: "publishItem",
        });
      const uploaded: UploadedMedia[] = [];
      for (const media of input.media) uploaded.push(await uploadMedia({ deps, destination, media }));
      if (uploaded.length === 0) return createPost(deps, { destination, item: input, uploaded });
      const polls = Math.max(1, deps.maxPolls ?? 5);
      for (let poll = 0; poll < polls; poll++) {
        if (poll > 0) await sleep(deps.pollIntervalMs ?? 1000);
        const round = await mediaRound({ deps, destination, media: uploaded });
        if (round === "available") return createPost(deps, { destination, item: input, uploaded });
        if (round === "missing")
          throw new ProviderError("transient", "LinkedIn lost an upload it had just accepted", {
            operation: "publishItem",
          });
      }
      return {
        pending: true,
        data: { media: uploaded.map(({ urn, kind }) => ({ urn, kind })) },
        checkAgainAt: deps.clock.now() + LINKEDIN_RECHECK_MS,
        provider: { operation: `GET /rest/${uploaded[0]!.kind}s/{urn}`, requestId: null, statusCode: 200 },
      };
    },

    /** Media still processing stays pending; once all is AVAILABLE the post is created (once). */
    async checkPending({ destination, item, data, since }) {
      const uploaded = pendingMedia(data);
      if (uploaded.length === 0)
        return { state: "gone", reason: "the pending LinkedIn upload was not recorded" };
      const round = await mediaRound({ deps, destination, media: uploaded });
      if (round === "missing")
        return { state: "gone", reason: "LinkedIn no longer knows the uploaded media" };
      if (round === "available")
        return { state: "published", item: await createPost(deps, { destination, item, uploaded }) };
      const now = deps.clock.now();
      if (now - since > LINKEDIN_MAX_PROCESSING_MS)
        throw new ProviderError("rejected", "LinkedIn did not finish processing the media within 2 hours", {
          operation: "checkPending",
        });
      return { state: "pending", checkAgainAt: now + LINKEDIN_RECHECK_MS };
    },
  };
}

/** Creates the post (NOT idempotent: LinkedIn takes no key); 201 with the URN in `x-restli-id`. */
async function createPost(
  deps: AdapterDeps,
  input: {
    destination: DestinationRef;
    item: PublishItemInput;
    uploaded: UploadedMedia[];
  },
): Promise<PublishedItem> {
  const { destination, item, uploaded } = input;
  const operation = "POST /rest/posts";
  const response = await linkedinCall({
    deps,
    operation,
    url: `${base(destination.origin)}/rest/posts`,
    init: {
      method: "POST",
      headers: { ...restHeaders(deps, accessTokenOf(destination)), "content-type": "application/json" },
      body: JSON.stringify({
        author: destination.externalId,
        commentary: escapeLittleText(item.text),
        visibility: visibilityOf({ destination, options: item.options }),
        distribution: {
          feedDistribution: "MAIN_FEED",
          targetEntities: [],
          thirdPartyDistributionChannels: [],
        },
        ...postContent({ item, uploaded }),
        lifecycleState: "PUBLISHED",
        isReshareDisabledByAuthor: item.options.allow_resharing === false,
      }),
    },
    idempotent: false,
  });
  // The post exists now: nothing below may throw.
  const header = response.headers.get("x-restli-id") ?? response.headers.get("x-linkedin-id") ?? "";
  const urn = header.startsWith("urn%3A") ? safeDecode(header) : header;
  return {
    providerObjectId: urn,
    url: urn ? `https://www.linkedin.com/feed/update/${urn}` : "https://www.linkedin.com/feed/",
    extra: { urn },
    provider: { operation, requestId: null, statusCode: response.status },
  };
}

/**
 * PUBLIC, or CONNECTIONS when `visibility` is `connections`. A page has no connections: rather than
 * widen the audience to everyone, that combination is refused (`rejected`) before anything is sent.
 */
function visibilityOf(input: { destination: DestinationRef; options: Record<string, unknown> }): string {
  if (input.options.visibility !== "connections") return "PUBLIC";
  if (input.destination.externalId.startsWith(LINKEDIN_PAGE_PREFIX))
    throw new ProviderError(
      "rejected",
      "a LinkedIn page has no connections: its posts are public (remove visibility or set it to public)",
      { operation: "publishItem" },
    );
  return "CONNECTIONS";
}

/** `content` of a post: one image or the video as `media`, several images as `multiImage`. */
function postContent(input: { item: PublishItemInput; uploaded: UploadedMedia[] }) {
  const entries = input.uploaded.map((u, i) => {
    const alt = input.item.media[i]?.altText;
    return { id: u.urn, ...(u.kind === "image" && alt ? { altText: alt } : {}) };
  });
  if (entries.length === 0) return {};
  if (entries.length === 1) return { content: { media: entries[0] } };
  return { content: { multiImage: { images: entries } } };
}

/** The uploads a pending item recorded (empty when the data is not what publishItem stored). */
function pendingMedia(data: Record<string, unknown>): UploadedMedia[] {
  const list = Array.isArray(data.media) ? data.media : [];
  const valid = list.filter(
    (m): m is UploadedMedia => typeof m?.urn === "string" && (m.kind === "image" || m.kind === "video"),
  );
  return valid.length === list.length ? valid.map(({ urn, kind }) => ({ urn, kind })) : [];
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
