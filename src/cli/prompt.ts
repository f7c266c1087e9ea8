// Asking the person at the terminal before a consequential action (publishing, scheduling, cancel…).
import { createInterface } from "node:readline/promises";
import { CommandError, UsageError } from "./errors.ts";

/** Whether a person can answer: stdin and stderr (where the question goes) are both terminals. */
export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/**
 * Confirms `question` (ends in "?"): `--yes` confirms at once; at a terminal the person answers y/N;
 * anywhere else it is a usage error, since nobody can answer. "No" stops the command (exit 1).
 */
export async function confirm(question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!interactive())
    throw new UsageError(
      `${question.replace(/\?$/, "")}: needs confirmation; pass --yes (no terminal to ask)`,
    );
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(`${question} [y/N] `)).trim().toLowerCase();
    if (answer !== "y" && answer !== "yes") throw new CommandError("not confirmed; nothing was sent");
  } finally {
    rl.close();
  }
}
