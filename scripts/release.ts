// `npm run release`: Herald compiled for every platform it ships, into dist/herald-<os>-<arch>, and
// dist/SHA256SUMS for them (check with `cd dist && sha256sum -c SHA256SUMS`). Each binary is built by
// `npm run build`'s own command from package.json, the one definition of the flags (bytecode, its
// order, minify, the runtime's argv): only `--target` and `--outfile` are added. Bun fetches each
// target's runtime from the npm registry the first time (kept in ~/.bun/install/cache).
//
// Any failure stops the run with exit 1 and no SHA256SUMS: a target whose build fails, or whose file
// is not an executable of its platform. Earlier outputs are deleted first, so dist/ never mixes two
// releases.
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
