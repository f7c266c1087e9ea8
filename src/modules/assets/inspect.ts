// image-size and mp4box are loaded on the first inspection, not at start (memory, start-up time).
import type { BlobStore } from "../../blobs/store.ts";

// What Herald learns from an uploaded file: image dimensions (image-size: PNG, JPEG, GIF, WebP),
// video dimensions and duration (mp4box: MP4/MOV), read from the head of the object (and, for
// videos, its `moov` box wherever it is) without loading the whole file.

/** The image types Herald takes (kinds `card` and `poster`). */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
/** The video types Herald takes (kind `video`). */
export const VIDEO_TYPES = ["video/mp4", "video/quicktime"] as const;

/** Declared types that name the same format as a canonical one. */
const ALIASES: Record<string, string> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "video/x-m4v": "video/mp4",
  "video/m4v": "video/mp4",
};

/** A declared content type in canonical form (lower case, parameters dropped, aliases resolved). */
export function canonicalContentType(contentType: string): string {
  const bare = contentType.split(";")[0]!.trim().toLowerCase();
  return ALIASES[bare] ?? bare;
}

/**
 * Whether an asset of `kind` may have this (canonical) content type: videos for `video`, images otherwise.
 */
export function contentTypeFitsKind(kind: "card" | "video" | "poster", contentType: string): boolean {
  return kind === "video"
    ? (VIDEO_TYPES as readonly string[]).includes(contentType)
    : (IMAGE_TYPES as readonly string[]).includes(contentType);
}

/** The result of inspecting an object. */
export interface Inspection {
  /** The media type the bytes really are. */
  contentType: string;
  width: number;
  height: number;
  durationSec: number;
}

/** The bytes are not a file Herald can read (the message says why, for the client). */
export class InspectionError extends Error {}

// ---- layout names ---------------------------------------------------------------------------------

/**
 * Layout names by aspect ratio (width ÷ height), widest first; the first row whose lower bound the
 * ratio reaches wins. The table is documented in docs/decisions.md.
 */
export const FORMATS: { name: string; minRatio: number; examples: string }[] = [
  { name: "x-landscape", minRatio: 1.6, examples: "16:9, 1.91:1, 2:1" },
  { name: "landscape", minRatio: 1.15, examples: "4:3, 3:2, 5:4" },
  { name: "square", minRatio: 0.87, examples: "1:1" },
  { name: "portrait", minRatio: 0.65, examples: "4:5, 3:4, 2:3" },
  { name: "vertical", minRatio: 0, examples: "9:16" },
];

/** The layout name of `width`×`height`. */
export function formatFor(width: number, height: number): string {
  const ratio = width / height;
  return FORMATS.find((f) => ratio >= f.minRatio)!.name;
}

// ---- images ---------------------------------------------------------------------------------------

const IMAGE_TYPE_OF: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};
/** Most headers are in the first KiB; JPEG EXIF blocks can push the frame header further. */
const IMAGE_HEAD_BYTES = [64 * 1024, 16 * 1024 * 1024];

async function inspectImage(store: BlobStore, key: string, size: number): Promise<Inspection> {
  let lastError: unknown = null;
  for (const limit of IMAGE_HEAD_BYTES) {
    const head = await store.readBytes(key, { start: 0, end: Math.min(size, limit) });
    try {
      const { imageSize } = await import("image-size");
      const found = imageSize(head);
      const contentType = found.type ? IMAGE_TYPE_OF[found.type] : undefined;
      if (!contentType)
        throw new InspectionError(
          `the file is a ${found.type ?? "unknown"} image; Herald takes PNG, JPEG, GIF and WebP`,
        );
      if (!found.width || !found.height) throw new InspectionError("the image has no dimensions");
      // EXIF orientations 5–8 rotate by 90°: the picture people see is the other way round.
      const rotated = (found.orientation ?? 1) >= 5;
      return {
        contentType,
        width: rotated ? found.height : found.width,
        height: rotated ? found.width : found.height,
        durationSec: 0,
      };
    } catch (error) {
      if (error instanceof InspectionError) throw error;
      lastError = error;
      if (limit >= size) break;
    }
  }
  throw new InspectionError(
    `the file is not a PNG, JPEG, GIF or WebP image Herald can read (${(lastError as Error)?.message ?? "unknown format"})`,
  );
}

// ---- videos ---------------------------------------------------------------------------------------

/** The largest `moov` box Herald reads (its sample tables grow with the length of the video). */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;

interface TopLevelBox {
  type: string;
  start: number;
  size: number;
}

/** Walks the top-level boxes of an ISO BMFF file with small range reads (`mdat` is skipped, not read). */
async function topLevelBoxes(store: BlobStore, key: string, fileSize: number): Promise<TopLevelBox[]> {
  const boxes: TopLevelBox[] = [];
  let offset = 0;
  while (offset + 8 <= fileSize && boxes.length < 1000) {
    const header = Buffer.from(
      await store.readBytes(key, { start: offset, end: Math.min(fileSize, offset + 16) }),
    );
    let size = header.readUInt32BE(0);
    const type = header.toString("latin1", 4, 8);
    if (!/^[\x20-\x7e]{4}$/.test(type))
      throw new InspectionError(`the file is not an MP4/MOV video (unreadable box at byte ${offset})`);
    if (size === 1) {
      if (header.length < 16) throw new InspectionError("the file ends inside a box header");
      size = Number(header.readBigUInt64BE(8));
    } else if (size === 0) {
      size = fileSize - offset; // the box runs to the end of the file
    }
    if (size < 8 || offset + size > fileSize)
      throw new InspectionError(`the ${type} box at byte ${offset} runs past the end of the file`);
    boxes.push({ type, start: offset, size });
    offset += size;
  }
  return boxes;
}

async function inspectVideo(store: BlobStore, key: string, size: number): Promise<Inspection> {
  const boxes = await topLevelBoxes(store, key, size);
  const ftyp = boxes.find((b) => b.type === "ftyp");
  const moov = boxes.find((b) => b.type === "moov");
  if (!ftyp || boxes[0] !== ftyp)
    throw new InspectionError("the file is not an MP4/MOV video (no ftyp box first)");
  if (!moov) throw new InspectionError("the video has no moov box (an unfinished recording?)");
  if (moov.size > MAX_MOOV_BYTES || ftyp.size > 4096)
    throw new InspectionError("the video's header boxes are too large to read");
  const ftypBytes = await store.readBytes(key, { start: ftyp.start, end: ftyp.start + ftyp.size });
  const moovBytes = await store.readBytes(key, { start: moov.start, end: moov.start + moov.size });
  const brand = Buffer.from(ftypBytes).toString("latin1", 8, 12);

  // mp4box parses the two boxes as one small file (sample offsets are wrong, and unused).
  const joined = new Uint8Array(ftypBytes.length + moovBytes.length);
  joined.set(ftypBytes, 0);
  joined.set(moovBytes, ftypBytes.length);
  const { createFile, Log, MP4BoxBuffer } = await import("mp4box");
  Log.setLogLevel(Log.error);
  const file = createFile();
  file.checkBuffer(MP4BoxBuffer.fromArrayBuffer(joined.buffer, 0));
  file.parse();
  const movie = file.moov;
  if (!movie?.mvhd) throw new InspectionError("the video's moov box has no movie header (mvhd)");
  const tracks = (movie.traks ?? []).map((trak) => ({
    handler: trak.mdia?.hdlr?.handler,
    // tkhd width and height are 16.16 fixed point.
    width: Math.round((trak.tkhd?.width ?? 0) / 65536),
    height: Math.round((trak.tkhd?.height ?? 0) / 65536),
  }));
  const video =
    tracks.find((t) => t.handler === "vide" && t.width > 0 && t.height > 0) ??
    tracks.find((t) => t.width > 0 && t.height > 0);
  if (!video) throw new InspectionError("the video has no track with a picture size");
  const { duration, timescale } = movie.mvhd;
  return {
    contentType: brand === "qt  " ? "video/quicktime" : "video/mp4",
    width: video.width,
    height: video.height,
    durationSec: timescale > 0 ? Math.round(duration / timescale) : 0,
  };
}

/**
 * Inspects the object at `key` as the declared kind of media: an image (card, poster) or a video.
 * Throws InspectionError when the bytes are not such a file.
 */
export async function inspectBlob(
  store: BlobStore,
  key: string,
  size: number,
  expect: "image" | "video",
): Promise<Inspection> {
  return expect === "image" ? inspectImage(store, key, size) : inspectVideo(store, key, size);
}

/** Whether two canonical media types are the same format for the purpose of an upload (MP4 ≈ MOV). */
export function sameMediaFamily(declared: string, detected: string): boolean {
  if (declared === detected) return true;
  // QuickTime and MP4 share the container; files are often labelled one way and branded the other.
  return (
    (VIDEO_TYPES as readonly string[]).includes(declared) &&
    (VIDEO_TYPES as readonly string[]).includes(detected)
  );
}
