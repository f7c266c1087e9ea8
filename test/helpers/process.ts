import { join, resolve } from "node:path";

/** The repository root, Bun and the CLI entry: the real program, run as a process the way a user runs it. */
export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = join(ROOT, "node_modules/.bin/bun");
export const MAIN = join(ROOT, "src/main.ts");

/** The parent's environment without any HERALD_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith("HERALD_") && value !== undefined) env[name] = value;
  return { ...env, ...extra };
}
