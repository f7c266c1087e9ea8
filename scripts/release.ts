// `npm run release`: Herald compiled for every platform it ships, into dist/herald-<os>-<arch>, and
// dist/SHA256SUMS for them (check with `cd dist && sha256sum -c SHA256SUMS`). Each binary is built by
// `npm run build`'s own command from package.json, the one definition of the flags (bytecode, its
// order, minify, the runtime's argv): only `--target` and `--outfile` are added. Bun fetches each
// target's runtime from the npm registry the first time (kept in ~/.bun/install/cache).
//
// Any failure stops the run with exit 1 and no SHA256SUMS: a target whose build fails, whose file is
// not an executable of its platform, or (darwin-arm64) whose code signature does not match the file.
// darwin-x64 leaves Bun with an invalid signature, which is removed (`runnableOnMacOS`). Earlier
// outputs are deleted first, so dist/ never mixes two releases.
import { spawnSync } from "bun";
import { createHash } from "node:crypto";
import {
  createReadStream,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  rmSync,
  statSync,
} from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");
const DIST = join(ROOT, "dist");

/** The platforms of a release, named as Bun's targets name them (`bun-<os>-<arch>`). */
export const RELEASE_TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
export type ReleaseTarget = (typeof RELEASE_TARGETS)[number];

/**
 * `npm run build`'s command (the package.json script) for one target: the same arguments, with
 * `--target=bun-<target>` and the output file. Refuses a script it cannot adapt safely: not one
 * `bun build` command, quoting (split on spaces would break it), no `--outfile`, or its own `--target`.
 */
export function releaseBuildCommand(buildScript: string, target: ReleaseTarget, outfile: string): string[] {
  const args = buildScript.trim().split(/\s+/);
  if (args[0] !== "bun" || args[1] !== "build" || /["'`\\;&|$]/.test(buildScript))
    throw new Error(`package.json "build" is not one plain \`bun build\` command: ${buildScript}`);
  const at = args.indexOf("--outfile");
  if (at < 0 || at + 1 >= args.length)
    throw new Error(`package.json "build" has no --outfile: ${buildScript}`);
  if (args.some((arg) => arg.startsWith("--target")))
    throw new Error(`package.json "build" already names a --target: ${buildScript}`);
  const command = args.slice(1);
  command[at] = outfile; // args[at + 1], one to the left without the leading "bun"
  return [command[0]!, `--target=bun-${target}`, ...command.slice(1)];
}

const ELF_MACHINES: Record<number, string> = { 62: "x64", 183: "arm64" };
const MACHO_CPUS: Record<number, string> = { 0x01000007: "x64", 0x0100000c: "arm64" };

/**
 * The platform an executable's first bytes say it is for (`linux-arm64`, `darwin-x64`…): a 64-bit
 * little-endian ELF by its e_machine, or a 64-bit Mach-O by its cputype; null for anything else.
 */
export function executablePlatform(header: Uint8Array): string | null {
  if (header.length < 20) return null;
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const elf = header[0] === 0x7f && header[1] === 0x45 && header[2] === 0x4c && header[3] === 0x46;
  if (elf && header[4] === 2 && header[5] === 1) {
    const arch = ELF_MACHINES[view.getUint16(18, true)];
    return arch ? `linux-${arch}` : null;
  }
  if (view.getUint32(0, true) === 0xfeedfacf) {
    const arch = MACHO_CPUS[view.getUint32(4, true)];
    return arch ? `darwin-${arch}` : null;
  }
  return null;
}

const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_HASHES: Record<number, string> = { 1: "sha1", 2: "sha256" };

/**
 * Why macOS would refuse this Mach-O's code signature, or null when every page hash of every code
 * directory matches the file. Apple silicon runs nothing unsigned: Bun signs what it cross-compiles
 * (ad hoc), and the signature must cover the program it appended, or the binary is killed at start.
 */
export function macOSSignatureProblem(file: Uint8Array): string | null {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < 32 || view.getUint32(0, true) !== 0xfeedfacf) return "not a 64-bit Mach-O";
  let signature: { offset: number; size: number } | null = null;
  let command = 32;
  for (let i = 0; i < view.getUint32(16, true); i++) {
    if (view.getUint32(command, true) === LC_CODE_SIGNATURE)
      signature = { offset: view.getUint32(command + 8, true), size: view.getUint32(command + 12, true) };
    command += view.getUint32(command + 4, true);
  }
  if (!signature) return "no code signature (LC_CODE_SIGNATURE)";
  if (signature.offset + signature.size > file.length)
    return "the code signature lies past the end of the file";
  if (signature.offset + signature.size < file.length) return "bytes follow the code signature";
  // The signature's blobs are big-endian.
  const blob = signature.offset;
  if (view.getUint32(blob) !== CSMAGIC_EMBEDDED_SIGNATURE)
    return "the code signature is not an embedded signature";
  let directories = 0;
  for (let i = 0; i < view.getUint32(blob + 8); i++) {
    const cd = blob + view.getUint32(blob + 12 + i * 8 + 4);
    if (view.getUint32(cd) !== CSMAGIC_CODEDIRECTORY) continue;
    const hashOffset = view.getUint32(cd + 16);
    const codeSlots = view.getUint32(cd + 28);
    const codeLimit = view.getUint32(cd + 32);
    const hashSize = file[cd + 36]!;
    const algorithm = CS_HASHES[file[cd + 37]!];
    const pageSize = 2 ** file[cd + 39]!;
    if (!algorithm) return `a code directory uses hash type ${file[cd + 37]}`;
    if (codeLimit !== signature.offset) return "the code signature does not cover the whole program";
    if (codeSlots !== Math.ceil(codeLimit / pageSize)) return "the code directory's page count is wrong";
    for (let slot = 0; slot < codeSlots; slot++) {
      const page = file.subarray(slot * pageSize, Math.min((slot + 1) * pageSize, codeLimit));
      const expected = file.subarray(
        cd + hashOffset + slot * hashSize,
        cd + hashOffset + (slot + 1) * hashSize,
      );
      const actual = createHash(algorithm).update(page).digest().subarray(0, hashSize);
      if (!actual.equals(expected)) return `page ${slot} does not match its ${algorithm} hash`;
    }
    directories++;
  }
  return directories > 0 ? null : "the code signature has no code directory";
}

const LC_SEGMENT_64 = 0x19;

/**
 * The Mach-O without its code signature, as `codesign --remove-signature` leaves it: the load command
 * gone, the file and `__LINKEDIT` ending where the signature began. Only for the layout Bun writes
 * (the signature last in the file, its load command the last one); anything else throws.
 */
export function withoutMachOSignature(file: Uint8Array): Uint8Array {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < 32 || view.getUint32(0, true) !== 0xfeedfacf) throw new Error("not a 64-bit Mach-O");
  const commands = view.getUint32(16, true);
  const commandsSize = view.getUint32(20, true);
  let signatureCommand = -1;
  let linkedit = -1;
  let command = 32;
  for (let i = 0; i < commands; i++) {
    const kind = view.getUint32(command, true);
    if (kind === LC_CODE_SIGNATURE) signatureCommand = command;
    const name = new TextDecoder().decode(file.subarray(command + 8, command + 24)).replace(/\0+$/, "");
    if (kind === LC_SEGMENT_64 && name === "__LINKEDIT") linkedit = command;
    command += view.getUint32(command + 4, true);
  }
  if (signatureCommand < 0 || linkedit < 0) throw new Error("no code signature or no __LINKEDIT segment");
  const offset = view.getUint32(signatureCommand + 8, true);
  const linkeditOffset = Number(view.getBigUint64(linkedit + 40, true));
  const linkeditEnd = linkeditOffset + Number(view.getBigUint64(linkedit + 48, true));
  if (
    signatureCommand + 16 !== 32 + commandsSize ||
    offset + view.getUint32(signatureCommand + 12, true) !== file.length
  )
    throw new Error("the code signature is not the last load command and the end of the file");
  if (linkeditEnd !== file.length) throw new Error("__LINKEDIT does not end the file");
  const stripped = file.slice(0, offset);
  const out = new DataView(stripped.buffer);
  out.setUint32(16, commands - 1, true);
  out.setUint32(20, commandsSize - 16, true);
  stripped.fill(0, signatureCommand, signatureCommand + 16);
  out.setBigUint64(linkedit + 48, BigInt(offset - linkeditOffset), true);
  return stripped;
}

/**
 * A darwin binary macOS will run, or the reason there is none. Apple silicon kills a program whose
 * signature is missing or wrong: an arm64 binary must carry a valid one. An x86-64 Mac runs an
 * unsigned program but kills one whose signature is wrong, which is what Bun 1.4 writes when it
 * cross-compiles for darwin-x64 (the runtime's own signature, over its old bytes): that one is removed.
 */
export function runnableOnMacOS(
  target: "darwin-x64" | "darwin-arm64",
  file: Uint8Array,
): { file: Uint8Array; note: string | null } {
  const problem = macOSSignatureProblem(file);
  if (problem === null) return { file, note: null };
  if (target === "darwin-arm64") throw new Error(`${target}: its code signature is invalid (${problem})`);
  return {
    file: withoutMachOSignature(file),
    note: `${target}: removed Bun's invalid code signature (${problem})`,
  };
}

function readHeader(path: string): Uint8Array {
  const header = new Uint8Array(64);
  const fd = openSync(path, "r");
  try {
    return header.subarray(0, readSync(fd, header, 0, header.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** Streams the file through SHA-256 (the binaries are over 100 MiB). */
async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function fail(message: string): never {
  console.error(`release: ${message}`);
  process.exit(1);
}

async function release(): Promise<void> {
  const buildScript = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.build as string;
  const sums = join(DIST, "SHA256SUMS");
  mkdirSync(DIST, { recursive: true });
  rmSync(sums, { force: true });
  for (const target of RELEASE_TARGETS) rmSync(join(DIST, `herald-${target}`), { force: true });

  const built: { file: string; size: number; sha256: string; seconds: number }[] = [];
  for (const target of RELEASE_TARGETS) {
    const outfile = join(DIST, `herald-${target}`);
    const command = releaseBuildCommand(buildScript, target, relative(ROOT, outfile));
    console.log(`==> ${target}: bun ${command.join(" ")}`);
    const started = performance.now();
    // The bun running this script is the one `npm run build` runs (node_modules/.bin/bun).
    const done = spawnSync([process.execPath, ...command], {
      cwd: ROOT,
      stdout: "inherit",
      stderr: "inherit",
    });
    if (done.exitCode !== 0) fail(`${target}: bun build exited ${done.exitCode ?? done.signalCode}`);
    const platform = executablePlatform(readHeader(outfile));
    if (platform !== target)
      fail(`${target}: ${relative(ROOT, outfile)} is an executable for ${platform ?? "nothing known"}`);
    if (target === "darwin-x64" || target === "darwin-arm64") {
      try {
        const checked = runnableOnMacOS(target, await Bun.file(outfile).bytes());
        if (checked.note) {
          await Bun.write(outfile, checked.file);
          console.log(checked.note);
        }
      } catch (error) {
        fail((error as Error).message);
      }
    }
    built.push({
      file: `herald-${target}`,
      size: statSync(outfile).size,
      sha256: await sha256(outfile),
      seconds: (performance.now() - started) / 1000,
    });
  }

  // sha256sum's own format (hash, two spaces, name), names relative to dist/.
  await Bun.write(sums, built.map((b) => `${b.sha256}  ${b.file}\n`).join(""));
  const width = Math.max(...built.map((b) => b.file.length));
  console.log(`\n${"file".padEnd(width)}  ${"size".padStart(9)}  sha256`);
  for (const b of built)
    console.log(
      `${b.file.padEnd(width)}  ${`${(b.size / 2 ** 20).toFixed(1)} MiB`.padStart(9)}  ${b.sha256}`,
    );
  const total = built.reduce((sum, b) => sum + b.seconds, 0);
  console.log(
    `\n${built.length} binaries in ${total.toFixed(1)} s; dist/SHA256SUMS written (cd dist && sha256sum -c SHA256SUMS)`,
  );
}

if (import.meta.main) await release();
