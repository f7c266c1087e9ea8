// Sizes the CLI prints (upload progress, summaries): one formatter, in the unit that fits.
import { expect, test } from "bun:test";
import { byteSize, bytes } from "../../src/cli/format.ts";

test("a size is shown in B, KiB, MiB or GiB as fits (44 KiB is not 0.0 MiB)", () => {
  expect(byteSize(0)).toBe("0 B");
  expect(byteSize(512)).toBe("512 B");
  expect(byteSize(44 * 1024)).toBe("44.0 KiB");
  expect(byteSize(45_000)).toBe("43.9 KiB");
  expect(byteSize(1024 * 1024 - 1)).toBe("1.0 MiB");
  expect(byteSize(12 * 1024 * 1024)).toBe("12.0 MiB");
  expect(byteSize(1.5 * 1024 ** 3)).toBe("1.5 GiB");
  expect(bytes(null)).toBeNull();
  expect(bytes(2048)).toBe("2.0 KiB");
});
