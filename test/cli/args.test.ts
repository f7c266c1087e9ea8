// The CLI's usage errors for options the parser refuses: in the CLI's words, naming the option, the
// command and its help, never the parser's own message.
import { describe, expect, test } from "bun:test";
import { parseCommand } from "../../src/cli/args.ts";
import { UsageError } from "../../src/cli/errors.ts";

const HELP = "herald posts create --help";
const refusal = (args: string[]) => {
  try {
    parseCommand(args, { when: { type: "string" } }, [0, 5], HELP);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("accepted");
};

describe("option errors", () => {
  test("an unknown option names itself, the command and its help", () => {
    expect(refusal(["--x"])).toBe(
      "unknown option --x for `herald posts create`; see `herald posts create --help`",
    );
    expect(refusal(["-z"])).toBe(
      "unknown option -z for `herald posts create`; see `herald posts create --help`",
    );
  });

  test("an option without its value, and a switch given one", () => {
    expect(refusal(["--when"])).toBe("--when needs a value; see `herald posts create --help`");
    expect(refusal(["--json=yes"])).toBe("--json takes no value; see `herald posts create --help`");
  });
});
