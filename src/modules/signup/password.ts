// The one rule for a password a person chooses (signup, setup, accepting an invitation, a reset,
// `admin bootstrap --password`): long enough, not too long, and not easy to guess by zxcvbn-ts's
// estimate (common passwords, dictionary words, keyboard patterns, repeats, the person's own address).
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

/** Password length the pages accept (Argon2id hashes any length; the ceiling bounds the work). */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;
/** zxcvbn's score (0–4) a password needs: 3 is "safely unguessable: moderate protection from offline attack". */
export const PASSWORD_MIN_SCORE = 3;

// The dictionaries are a few MB of JSON: loaded on the first password checked, not at start-up
// (test/startup-lazy-loading.test.ts). `require` keeps the check synchronous for its callers.
let estimator: ZxcvbnFactory | null = null;

function strengthEstimator(): ZxcvbnFactory {
  if (estimator) return estimator;
  const core = require("@zxcvbn-ts/core") as typeof import("@zxcvbn-ts/core");
  const common = require("@zxcvbn-ts/language-common") as typeof import("@zxcvbn-ts/language-common");
  const en = require("@zxcvbn-ts/language-en") as typeof import("@zxcvbn-ts/language-en");
  estimator = new core.ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  });
  return estimator;
}

/** The words a guesser would try first for this person: each input whole and its parts (ada, example). */
function guessableWords(userInputs: readonly string[]): string[] {
  const words = new Set<string>(["herald"]);
  for (const input of userInputs) {
    const lower = input.trim().toLowerCase();
    if (!lower) continue;
    words.add(lower);
    for (const part of lower.split(/[^\p{L}\p{N}]+/u)) if (part.length >= 3) words.add(part);
  }
  return [...words];
}

/**
 * Why a password is too weak to be chosen, as a message for its field that says what to do; null
 * when it is strong enough. `userInputs` are what the person's password must not be built from (their
 * e-mail address, workspace or account name). Runs of spaces count as one space: ten spaces, or two
 * letters far apart, are not ten characters of protection. Length limits are checked by the caller
 * (`newPasswordErrors`) first.
 */
export function weakPasswordReason(password: string, userInputs: readonly string[]): string | null {
  const collapsed = password.replace(/\s+/g, " ").trim();
  if (collapsed === "") return "A password of spaces only is easy to guess: use words, letters or digits.";
  if (collapsed.length < PASSWORD_MIN_LENGTH)
    return `Spaces in a row count as one: use at least ${PASSWORD_MIN_LENGTH} characters besides them.`;
  const result = strengthEstimator().check(collapsed, guessableWords(userInputs));
  if (result.score >= PASSWORD_MIN_SCORE) return null;
  const { warning, suggestions } = result.feedback;
  const advice = suggestions.length > 0 ? suggestions : ["Add another word or two that are not common."];
  return [`This password is easy to guess.`, warning ?? "", ...advice].filter(Boolean).join(" ");
}

/** The two fields of a new password, checked: length, strength, then that both say the same. */
export function newPasswordErrors(
  password: string,
  confirmation: string,
  userInputs: readonly string[],
): { password?: string; password_confirmation?: string } {
  if (password.length < PASSWORD_MIN_LENGTH)
    return { password: `Use at least ${PASSWORD_MIN_LENGTH} characters.` };
  if (password.length > PASSWORD_MAX_LENGTH)
    return { password: `Use at most ${PASSWORD_MAX_LENGTH} characters.` };
  const weak = weakPasswordReason(password, userInputs);
  if (weak) return { password: weak };
  if (password !== confirmation) return { password_confirmation: "The two passwords differ." };
  return {};
}
