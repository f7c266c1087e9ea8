// Argument parsing for the client's commands: node:util parseArgs, strict, every mistake a UsageError
// (exit 2) that names the command's help.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./errors.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parsed options by name (strings, booleans, or lists for `multiple` options) and the positionals. */
export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * Parses one command's arguments; `--json` and `-h/--help` are always accepted. `positionals` is the
 * [least, most] count allowed (checked only when --help is absent); `help` names the help command.
 */
export function parseCommand(
  args: string[],
  options: Options,
  positionals: [number, number],
  help: string,
): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }) as Parsed;
  } catch (error) {
    throw new UsageError(usageMessage(error as Error & { code?: string }, help));
  }
  const [least, most] = positionals;
  const count = parsed.positionals.length;
  if (!parsed.values.help && (count < least || count > most))
    throw new UsageError(
      count < least
        ? `missing argument (see ${help})`
        : `unexpected argument ${JSON.stringify(parsed.positionals[most])} (see ${help})`,
    );
  return parsed;
}

/**
 * The parser's refusal in the CLI's words: the option, the command it is not an option of, and where to
 * read the command's options (`help` is e.g. "herald posts create --help").
 */
function usageMessage(error: Error & { code?: string }, help: string): string {
  const command = help.replace(/ --help$/, "");
  const quoted = /'(-{1,2}[^'\s]+)/.exec(error.message)?.[1];
  const option = quoted?.replace(/ <value>$/, "");
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option ?? "given"} for \`${command}\`; see \`${help}\``;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (!option) return `an option has a value of the wrong kind; see \`${help}\``;
      return /does not take an argument/i.test(error.message)
        ? `${option} takes no value; see \`${help}\``
        : `${option} needs a value; see \`${help}\``;
    default:
      return `${error.message} (see \`${help}\`)`;
  }
}

/** A string option, or undefined. */
export function str(p: Parsed, name: string): string | undefined {
  const value = p.values[name];
  return typeof value === "string" ? value : undefined;
}

/** A boolean option (absent is false). */
export function flag(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}

/** A repeatable option's values (absent is empty). */
export function many(p: Parsed, name: string): string[] {
  const value = p.values[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

/** `--limit`'s value checked (1 to 100), or undefined. */
export function limitOf(p: Parsed): string | undefined {
  const limit = str(p, "limit");
  if (limit !== undefined && !/^(100|[1-9][0-9]?)$/.test(limit))
    throw new UsageError("--limit must be a whole number from 1 to 100");
  return limit;
}

/** The options every listing takes. */
export const PAGING: Options = {
  limit: { type: "string" },
  after: { type: "string" },
  all: { type: "boolean" },
};
