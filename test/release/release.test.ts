// The release build's pieces that run without building: the command it derives from `npm run build`,
// how it recognises each platform's executable, and the systemd unit shipped in packaging/. The
// build itself and the linux-arm64 binary under qemu are checked by .ci/run's release section.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import {
  executablePlatform,
  macOSSignatureProblem,
  RELEASE_TARGETS,
  releaseBuildCommand,
  runnableOnMacOS,
  withoutMachOSignature,
} from "../../scripts/release.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BUILD_SCRIPT = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.build as string;

describe("releaseBuildCommand", () => {
  test("is npm run build's command with a target and another output file, every flag kept", () => {
    const build = BUILD_SCRIPT.split(/\s+/);
    for (const target of RELEASE_TARGETS) {
      const command = releaseBuildCommand(BUILD_SCRIPT, target, `dist/herald-${target}`);
      expect(command[0]).toBe("build");
      expect(command[1]).toBe(`--target=bun-${target}`);
      expect(command.slice(2, command.indexOf("--outfile"))).toEqual(
        build.slice(2, build.indexOf("--outfile")),
      );
      expect(command.slice(command.indexOf("--outfile"))).toEqual(["--outfile", `dist/herald-${target}`]);
      for (const flag of ["--compile", "--minify", "--bytecode", "--format=esm", "--splitting"])
        expect(command).toContain(flag);
      expect(command.some((arg) => arg.startsWith("--bytecode-order="))).toBe(true);
    }
  });

  test("keeps what follows --outfile's value", () => {
    expect(
      releaseBuildCommand("bun build --compile a.ts --outfile dist/x --minify", "linux-arm64", "out"),
    ).toEqual(["build", "--target=bun-linux-arm64", "--compile", "a.ts", "--outfile", "out", "--minify"]);
  });

  test("refuses a build script it cannot adapt safely", () => {
    const refusals: [string, string][] = [
      ["bun build --compile src/main.ts", "no --outfile"],
      ["bun build --compile src/main.ts --outfile", "no --outfile"],
      [
        "bun build --compile --target=bun-linux-x64 src/main.ts --outfile dist/herald",
        "already names a --target",
      ],
      ['bun build --compile "--define=x=1 2" src/main.ts --outfile dist/herald', "not one plain"],
      ["bun build --compile src/main.ts --outfile dist/herald && strip dist/herald", "not one plain"],
      ["tsc && bun build --compile src/main.ts --outfile dist/herald", "not one plain"],
    ];
    for (const [script, reason] of refusals)
      expect(() => releaseBuildCommand(script, "linux-x64", "out")).toThrow(reason);
  });
});

/** The first bytes of a 64-bit executable: ELF with e_machine, or Mach-O with cputype. */
function header(kind: "elf" | "macho", machine: number): Uint8Array {
  const bytes = new Uint8Array(64);
  const view = new DataView(bytes.buffer);
  if (kind === "elf") {
    bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
    view.setUint16(18, machine, true);
  } else {
    view.setUint32(0, 0xfeedfacf, true);
    view.setUint32(4, machine, true);
  }
  return bytes;
}

describe("executablePlatform", () => {
  test("names the platform of each kind of binary a release holds", () => {
    expect(executablePlatform(header("elf", 62))).toBe("linux-x64");
    expect(executablePlatform(header("elf", 183))).toBe("linux-arm64");
    expect(executablePlatform(header("macho", 0x01000007))).toBe("darwin-x64");
    expect(executablePlatform(header("macho", 0x0100000c))).toBe("darwin-arm64");
  });

  test("recognises the bun this test runs on", () => {
    const bytes = readFileSync(process.execPath).subarray(0, 64);
    const os = process.platform === "darwin" ? "darwin" : "linux";
    expect(executablePlatform(bytes)).toBe(`${os}-${process.arch}`);
  });

  test("is null for anything else", () => {
    const elf32 = header("elf", 62);
    elf32[4] = 1;
    const bigEndian = header("elf", 183);
    bigEndian[5] = 2;
    const macho32 = new Uint8Array(64);
    new DataView(macho32.buffer).setUint32(0, 0xfeedface, true);
    for (const bytes of [
      elf32,
      bigEndian,
      header("elf", 40), // 32-bit ARM
      header("macho", 0x01000012), // PowerPC 64
      macho32,
      new TextEncoder().encode("#!/bin/sh\necho herald 0.1.0\n"),
      new Uint8Array(0),
    ])
      expect(executablePlatform(bytes)).toBeNull();
  });
});

const PAGE = 4096;
/** Where the program ends and the signature begins in `signedMachO`'s files (a partial last page). */
const CODE_END = 3 * PAGE + 100;

/**
 * A small Mach-O laid out as Bun writes its darwin binaries: a header, a __LINKEDIT segment that ends
 * the file, and an ad hoc signature (one SHA-256 code directory) last, whose page hashes cover the
 * program up to `codeLimit` (the whole program unless told otherwise).
 */
function signedMachO(cpu: number, codeLimit = CODE_END): Uint8Array {
  const directoryHeader = 96; // the code directory's fields, then the identifier "herald"
  const slots = Math.ceil(codeLimit / PAGE);
  const directoryLength = directoryHeader + slots * 32;
  const signatureLength = 20 + directoryLength;
  const file = new Uint8Array(CODE_END + signatureLength);
  const view = new DataView(file.buffer);
  for (let i = 32 + 88; i < CODE_END; i++) file[i] = (i * 7) % 251; // the "program"
  view.setUint32(0, 0xfeedfacf, true);
  view.setUint32(4, cpu, true);
  view.setUint32(12, 2, true); // MH_EXECUTE
  view.setUint32(16, 2, true); // two load commands
  view.setUint32(20, 72 + 16, true);
  view.setUint32(32, 0x19, true); // LC_SEGMENT_64 __LINKEDIT: the last 100 bytes of code, then the signature
  view.setUint32(36, 72, true);
  file.set(new TextEncoder().encode("__LINKEDIT"), 40);
  view.setBigUint64(72, BigInt(CODE_END - 100), true);
  view.setBigUint64(80, BigInt(100 + signatureLength), true);
  view.setUint32(104, 0x1d, true); // LC_CODE_SIGNATURE
  view.setUint32(108, 16, true);
  view.setUint32(112, CODE_END, true);
  view.setUint32(116, signatureLength, true);
  const blob = CODE_END;
  view.setUint32(blob, 0xfade0cc0); // the superblob, big-endian
  view.setUint32(blob + 4, signatureLength);
  view.setUint32(blob + 8, 1);
  view.setUint32(blob + 12, 0); // CSSLOT_CODEDIRECTORY
  view.setUint32(blob + 16, 20);
  const cd = blob + 20;
  view.setUint32(cd, 0xfade0c02);
  view.setUint32(cd + 4, directoryLength);
  view.setUint32(cd + 8, 0x20400);
  view.setUint32(cd + 12, 0x20002); // adhoc, linker-signed
  view.setUint32(cd + 16, directoryHeader);
  view.setUint32(cd + 20, 88);
  view.setUint32(cd + 28, slots);
  view.setUint32(cd + 32, codeLimit);
  file.set([32, 2, 0, 12], cd + 36); // hash size, SHA-256, platform, log2(page size)
  file.set(new TextEncoder().encode("herald"), cd + 88);
  for (let slot = 0; slot < slots; slot++) {
    const page = file.subarray(slot * PAGE, Math.min((slot + 1) * PAGE, codeLimit));
    file.set(createHash("sha256").update(page).digest(), cd + directoryHeader + slot * 32);
  }
  return file;
}

const ARM64 = 0x0100000c;
const X86_64 = 0x01000007;

describe("darwin code signatures", () => {
  test("a signature whose page hashes cover the whole program is valid, and kept", () => {
    const file = signedMachO(ARM64);
    expect(macOSSignatureProblem(file)).toBeNull();
    expect(runnableOnMacOS("darwin-arm64", file)).toEqual({ file, note: null });
  });

  test("names what is wrong with a signature", () => {
    const changed = signedMachO(ARM64);
    changed[PAGE + 10]! ^= 1;
    expect(macOSSignatureProblem(changed)).toBe("page 1 does not match its sha256 hash");
    expect(macOSSignatureProblem(signedMachO(X86_64, 2 * PAGE))).toBe(
      "the code signature does not cover the whole program",
    );
    const truncated = signedMachO(ARM64).subarray(0, CODE_END + 50);
    expect(macOSSignatureProblem(truncated)).toBe("the code signature lies past the end of the file");
    const valid = signedMachO(ARM64);
    const trailing = new Uint8Array(valid.length + 200);
    trailing.set(valid);
    expect(macOSSignatureProblem(trailing)).toBe("bytes follow the code signature");
    expect(macOSSignatureProblem(header("elf", 183))).toBe("not a 64-bit Mach-O");
  });

  test("an arm64 binary with an invalid signature stops the release", () => {
    expect(() => runnableOnMacOS("darwin-arm64", signedMachO(ARM64, 2 * PAGE))).toThrow(
      "darwin-arm64: its code signature is invalid (the code signature does not cover the whole program)",
    );
  });

  test("an x86-64 binary with an invalid signature is shipped without it, as codesign --remove-signature does", () => {
    const file = signedMachO(X86_64, 2 * PAGE);
    const { file: stripped, note } = runnableOnMacOS("darwin-x64", file);
    expect(note).toBe(
      "darwin-x64: removed Bun's invalid code signature (the code signature does not cover the whole program)",
    );
    expect(stripped.length).toBe(CODE_END);
    expect(
      Buffer.from(stripped.subarray(120, CODE_END)).equals(Buffer.from(file.subarray(120, CODE_END))),
    ).toBe(true);
    const view = new DataView(stripped.buffer, stripped.byteOffset);
    expect(view.getUint32(16, true)).toBe(1); // load commands
    expect(view.getUint32(20, true)).toBe(72);
    expect([...stripped.subarray(104, 120)]).toEqual(new Array(16).fill(0));
    expect(view.getBigUint64(80, true)).toBe(100n); // __LINKEDIT ends where the signature began
    expect(executablePlatform(stripped)).toBe("darwin-x64");
    expect(macOSSignatureProblem(stripped)).toBe("no code signature (LC_CODE_SIGNATURE)");
    expect(() => withoutMachOSignature(stripped)).toThrow("no code signature");
  });
});

const UNIT_PATH = join(ROOT, "packaging", "herald.service");

/** The unit's settings by section; a key given more than once keeps every value, in order. */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] ??= {};
      continue;
    }
    const at = line.indexOf("=");
    if (at < 0 || !current) throw new Error(`not a unit line: ${line}`);
    (current[line.slice(0, at)] ??= []).push(line.slice(at + 1));
  }
  return sections;
}

/** systemd's time span (`120s`, `2min`, `90`) in seconds. */
function seconds(span: string): number {
  const match = /^(\d+)\s*(s|sec|min|m)?$/.exec(span);
  if (!match) throw new Error(`unexpected time span ${span}`);
  return Number(match[1]) * (match[2] === "min" || match[2] === "m" ? 60 : 1);
}

describe("packaging/herald.service", () => {
  const unit = parseUnit(readFileSync(UNIT_PATH, "utf8"));
  const service = unit.Service!;
  const one = (key: string) => {
    expect(service[key]).toHaveLength(1);
    return service[key]![0]!;
  };
  const environment = Object.fromEntries(
    (service.Environment ?? []).map((assignment) => {
      const at = assignment.indexOf("=");
      return [assignment.slice(0, at), assignment.slice(at + 1)];
    }),
  );

  test("runs herald serve as its own user, restarted on failure, started after the network", () => {
    expect(one("ExecStart")).toBe("/usr/local/bin/herald serve");
    expect(one("User")).toBe("herald");
    expect(one("Group")).toBe("herald");
    expect(one("Restart")).toBe("on-failure");
    expect(unit.Unit!.After).toContain("network-online.target");
    expect(unit.Install!.WantedBy).toEqual(["multi-user.target"]);
  });

  test("keeps its data in one directory: the working directory, HERALD_DATA_DIR, the one writable path", () => {
    const dataDir = environment.HERALD_DATA_DIR;
    expect(dataDir).toBe("/var/lib/herald");
    expect(one("WorkingDirectory")).toBe(dataDir!);
    expect(one("StateDirectory")).toBe("herald");
    expect(one("ReadWritePaths").split(/\s+/)).toEqual([dataDir!]);
  });

  test("names only HERALD_* variables Herald reads, with values it accepts", () => {
    const configSource = readFileSync(join(ROOT, "src", "config.ts"), "utf8");
    expect(Object.keys(environment).length).toBeGreaterThan(0);
    for (const name of Object.keys(environment)) {
      expect(name).toStartWith("HERALD_");
      expect(configSource).toContain(`"${name}"`);
    }
    const config = loadConfig(environment);
    expect(config.dataDir).toBe("/var/lib/herald");
    expect(config.host).toBe("127.0.0.1");
    expect(config.port).toBe(8080);
  });

  test("waits for the graceful stop: a network call in flight (30 s) and then the requests (30 s)", () => {
    expect(one("KillSignal")).toBe("SIGTERM");
    expect(seconds(one("TimeoutStopSec"))).toBeGreaterThan(60);
  });

  test("is hardened", () => {
    for (const [key, value] of Object.entries({
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      PrivateDevices: "yes",
      RestrictSUIDSGID: "yes",
      CapabilityBoundingSet: "",
      UMask: "0077",
    }))
      expect(`${key}=${one(key)}`).toBe(`${key}=${value}`);
    expect(service.SystemCallFilter).toContain("@system-service");
    // The JIT writes machine code: this setting would stop the runtime.
    expect(service.MemoryDenyWriteExecute).toBeUndefined();
  });

  test("is the unit docs/operations.md shows, but for the comments", () => {
    const docs = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
    const shown = /^## Running under systemd\n[\s\S]*?^```ini\n([\s\S]*?)^```$/m.exec(docs)?.[1];
    const settings = (text: string) =>
      text.split("\n").filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
    expect(shown).toBeDefined();
    expect(settings(shown!)).toEqual(settings(readFileSync(UNIT_PATH, "utf8")));
  });

  test.skipIf(!Bun.which("systemd-analyze"))("passes systemd-analyze verify without a complaint", () => {
    // verify wants ExecStart's program to exist (it prints, but exits 0, for unknown keys or bad
    // values): a copy of the unit that runs /bin/true instead of the herald not installed here.
    const dir = mkdtempSync(join(tmpdir(), "herald-unit-"));
    try {
      const unitText = readFileSync(UNIT_PATH, "utf8");
      expect(unitText).toContain("\nExecStart=/usr/local/bin/herald serve\n");
      writeFileSync(
        join(dir, "herald.service"),
        unitText.replace("\nExecStart=/usr/local/bin/herald ", "\nExecStart=/bin/true "),
      );
      const verify = Bun.spawnSync(["systemd-analyze", "verify", join(dir, "herald.service")], {
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(`${verify.stdout}${verify.stderr}`).toBe("");
      expect(verify.exitCode).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
