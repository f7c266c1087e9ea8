// Real media files made in the test, byte by byte: PNG, JPEG, GIF and WebP headers that image
// decoders accept, and MP4/MOV files with ftyp, mdat and moov (mvhd, trak with tkhd and hdlr).
import { deflateSync } from "node:zlib";

const CRC32_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC32_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid RGB PNG of width×height; `padTo` adds a private chunk so the file has that many bytes. */
export function png(width: number, height: number, padTo = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x5a)]);
  const idat = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  const parts = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
  ];
  const size = parts.reduce((n, p) => n + p.length, 0) + 12;
  if (padTo > size) {
    const filler = Buffer.alloc(padTo - size - 12);
    for (let i = 0; i < filler.length; i++) filler[i] = (i * 31 + 7) & 0xff;
    parts.push(pngChunk("prVt", filler));
  }
  parts.push(pngChunk("IEND", new Uint8Array(0)));
  return Buffer.concat(parts);
}

/** A baseline JPEG header (SOI, JFIF APP0, an EXIF-sized APP1 block, SOF0 with the size) and EOI. */
export function jpeg(width: number, height: number, exifPadding = 0): Buffer {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ]);
  const segments: Buffer[] = [Buffer.from([0xff, 0xd8]), app0];
  // Comment segments push the frame header further into the file, as big EXIF blocks do.
  for (let left = exifPadding; left > 0; left -= 65533) {
    const n = Math.min(left, 65533);
    const seg = Buffer.alloc(4 + n, 0x20);
    seg.writeUInt16BE(0xfffe, 0);
    seg.writeUInt16BE(n + 2, 2);
    segments.push(seg);
  }
  const sof = Buffer.from([
    0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,
  ]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  segments.push(sof, Buffer.from([0xff, 0xd9]));
  return Buffer.concat(segments);
}

/** A GIF89a header with its logical screen size, one empty image and the trailer. */
export function gif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13);
  head.write("GIF89a", 0, "ascii");
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  return Buffer.concat([
    head,
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b]),
  ]);
}

/** An extended WebP (RIFF, VP8X with the canvas size). */
export function webp(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(18);
  vp8x.write("VP8X", 0, "ascii");
  vp8x.writeUInt32LE(10, 4);
  vp8x.writeUIntLE(width - 1, 12, 3);
  vp8x.writeUIntLE(height - 1, 15, 3);
  const riff = Buffer.alloc(12);
  riff.write("RIFF", 0, "ascii");
  riff.writeUInt32LE(4 + vp8x.length, 4);
  riff.write("WEBP", 8, "ascii");
  return Buffer.concat([riff, vp8x]);
}

function box(type: string, ...payload: Uint8Array[]): Buffer {
  const length = 8 + payload.reduce((n, p) => n + p.length, 0);
  const out = Buffer.alloc(length);
  out.writeUInt32BE(length, 0);
  out.write(type, 4, "latin1");
  let offset = 8;
  for (const p of payload) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

function mvhd(timescale: number, duration: number): Buffer {
  const b = Buffer.alloc(100);
  b.writeUInt32BE(timescale, 12);
  b.writeUInt32BE(duration, 16);
  b.writeUInt32BE(0x00010000, 20); // rate 1.0
  b.writeUInt16BE(0x0100, 24); // volume 1.0
  b.writeUInt32BE(0x00010000, 36); // identity matrix
  b.writeUInt32BE(0x00010000, 52);
  b.writeUInt32BE(0x40000000, 68);
  b.writeUInt32BE(2, 96); // next track id
  return box("mvhd", b);
}

function tkhd(width: number, height: number, duration: number): Buffer {
  const b = Buffer.alloc(84);
  b.writeUInt32BE(0x00000003, 0); // version 0, enabled + in movie
  b.writeUInt32BE(1, 12); // track id
  b.writeUInt32BE(duration, 20);
  b.writeUInt32BE(0x00010000, 40);
  b.writeUInt32BE(0x00010000, 56);
  b.writeUInt32BE(0x40000000, 72);
  b.writeUInt32BE(width * 65536, 76); // 16.16 fixed point
  b.writeUInt32BE(height * 65536, 80);
  return box("tkhd", b);
}

function hdlr(handler: string): Buffer {
  const b = Buffer.alloc(25);
  b.write(handler, 8, "latin1");
  return box("hdlr", b);
}

/** The header boxes of a video: ftyp (brand `isom`, or `qt  ` for MOV). */
export function ftyp(brand = "isom"): Buffer {
  return box(
    "ftyp",
    Buffer.from(brand, "latin1"),
    Buffer.from([0, 0, 2, 0]),
    Buffer.from("isomiso2mp41", "latin1"),
  );
}

/** A moov box with mvhd and one video trak (tkhd, mdia/hdlr `vide`). */
export function moov(width: number, height: number, durationSec: number, timescale = 1000): Buffer {
  const duration = Math.round(durationSec * timescale);
  return box(
    "moov",
    mvhd(timescale, duration),
    box("trak", tkhd(width, height, duration), box("mdia", hdlr("vide"))),
  );
}

/** An mdat box header announcing `payloadBytes` of media data. */
export function mdatHeader(payloadBytes: number): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payloadBytes, 0);
  header.write("mdat", 4, "latin1");
  return header;
}

/** A small MP4 (or MOV with `brand: "qt  "`): ftyp, mdat, and moov at the end as cameras write it. */
export function mp4(
  width: number,
  height: number,
  durationSec: number,
  options: { brand?: string; mdatBytes?: number } = {},
): Buffer {
  const payload = Buffer.alloc(options.mdatBytes ?? 64, 0xab);
  return Buffer.concat([
    ftyp(options.brand),
    mdatHeader(payload.length),
    payload,
    moov(width, height, durationSec),
  ]);
}
