// CRC64NVME: the check value, the S3 wire form, streaming, and the combine of part checksums
// into the whole file's; and the layout names of the format table.
import { describe, expect, test } from "bun:test";
import {
  combineCrc64Nvme,
  createCrc64Nvme,
  crc64nvmeFromBase64,
  crc64nvmeOf,
  crc64nvmeToBase64,
  crc64nvmeToHex,
} from "../../src/lib/crc64nvme.ts";
import { formatFor } from "../../src/modules/assets/inspect.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** Bit-at-a-time CRC-64/NVME straight from its definition, to check the fast one against. */
function referenceCrc(bytes: Uint8Array): bigint {
  const poly = 0x9a6c9329ac4bc9b5n;
  let crc = 0xffffffffffffffffn;
  for (const byte of bytes) {
    crc ^= BigInt(byte);
    for (let k = 0; k < 8; k++) crc = crc & 1n ? (crc >> 1n) ^ poly : crc >> 1n;
  }
  return crc ^ 0xffffffffffffffffn;
}

describe("CRC64NVME", () => {
  test('"123456789" is 0xAE8B14860A799888, rosUhgp5mIg= on the wire', async () => {
    const value = await crc64nvmeOf(text("123456789"));
    expect(value).toBe(0xae8b14860a799888n);
    expect(crc64nvmeToBase64(value)).toBe("rosUhgp5mIg=");
    expect(crc64nvmeToHex(value)).toBe("ae8b14860a799888");
  });

  const inputs: { name: string; bytes: Uint8Array }[] = [
    { name: "nothing", bytes: new Uint8Array(0) },
    { name: "one zero byte", bytes: new Uint8Array(1) },
    { name: "a sentence", bytes: text("The quick brown fox jumps over the lazy dog") },
    {
      name: "4099 pseudo-random bytes",
      bytes: Uint8Array.from({ length: 4099 }, (_, i) => (i * 2654435761) >>> 24),
    },
  ];
  for (const c of inputs) {
    test(`matches the bit-at-a-time definition on ${c.name}`, async () => {
      expect(await crc64nvmeOf(c.bytes)).toBe(referenceCrc(c.bytes));
    });
  }

  test("streaming in uneven chunks gives the same value, and digest can be read mid-stream", async () => {
    const bytes = inputs[3]!.bytes;
    const crc = await createCrc64Nvme();
    let offset = 0;
    for (const size of [1, 7, 1000, 3, 4096]) {
      crc.update(bytes.subarray(offset, offset + size));
      offset = Math.min(bytes.length, offset + size);
      expect(crc.digest()).toBe(referenceCrc(bytes.subarray(0, offset)));
    }
    crc.reset();
    crc.update(text("123456789"));
    expect(crc.digest()).toBe(0xae8b14860a799888n);
  });

  const splits = [
    [5, 4],
    [1, 8],
    [9, 0],
    [0, 9],
    [3, 3, 3],
  ];
  for (const sizes of splits) {
    test(`combining parts of ${sizes.join("+")} bytes of "123456789" gives the whole value`, async () => {
      const whole = text("123456789");
      let offset = 0;
      let acc: bigint | null = null;
      for (const size of sizes) {
        const part = await crc64nvmeOf(whole.subarray(offset, offset + size));
        acc = acc === null ? part : combineCrc64Nvme(acc, part, size);
        offset += size;
      }
      expect(acc).toBe(0xae8b14860a799888n);
    });
  }

  test("combining 5 MiB parts gives the value of the whole buffer", async () => {
    const part = 5 * 1024 * 1024;
    const bytes = Uint8Array.from({ length: 2 * part + 12345 }, (_, i) => (i * 31 + (i >>> 13)) & 0xff);
    const values = await Promise.all(
      [0, 1, 2].map((n) => crc64nvmeOf(bytes.subarray(n * part, (n + 1) * part))),
    );
    const combined = combineCrc64Nvme(combineCrc64Nvme(values[0]!, values[1]!, part), values[2]!, 12345);
    expect(combined).toBe(await crc64nvmeOf(bytes));
  });

  const wire: { text: string; value: bigint | null }[] = [
    { text: "rosUhgp5mIg=", value: 0xae8b14860a799888n },
    { text: "AAAAAAAAAAA=", value: 0n },
    { text: "//////////8=", value: 0xffffffffffffffffn },
    { text: "rosUhgp5mIh=", value: null }, // non-canonical padding bits
    { text: "rosUhgp5mIg", value: null },
    { text: "AAAAAA==", value: null },
    { text: "ae8b14860a799888", value: null },
    { text: "rosUhgp5mIg=\n", value: null },
  ];
  for (const c of wire) {
    test(`parses ${JSON.stringify(c.text)} as ${c.value === null ? "invalid" : c.value.toString(16)}`, () => {
      expect(crc64nvmeFromBase64(c.text)).toBe(c.value);
    });
  }
});

describe("layout names", () => {
  const cases: [number, number, string][] = [
    [1920, 1080, "x-landscape"],
    [1200, 628, "x-landscape"],
    [1600, 1000, "x-landscape"],
    [1599, 1000, "landscape"],
    [1024, 768, "landscape"],
    [1080, 720, "landscape"],
    [1150, 1000, "landscape"],
    [1149, 1000, "square"],
    [1080, 1080, "square"],
    [870, 1000, "square"],
    [869, 1000, "portrait"],
    [1080, 1350, "portrait"],
    [768, 1024, "portrait"],
    [650, 1000, "portrait"],
    [649, 1000, "vertical"],
    [1080, 1920, "vertical"],
    [1, 10_000, "vertical"],
  ];
  for (const [w, h, name] of cases) {
    test(`${w}×${h} is ${name}`, () => expect(formatFor(w, h)).toBe(name));
  }
});
