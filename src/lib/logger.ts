/** Structured one-line JSON logs on stderr; never pass secrets in `fields`. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

type Level = "info" | "warn" | "error";

/** A logger writing JSON lines to a sink (stderr by default); `silent` drops everything. */
export function createLogger(options: { sink?: (line: string) => void; silent?: boolean } = {}): Logger {
  const sink = options.sink ?? ((line: string) => process.stderr.write(line + "\n"));
  const write = (level: Level, message: string, fields?: Record<string, unknown>) => {
    if (options.silent) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }));
  };
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

/** A logger that remembers lines, for tests that assert on what was (not) logged. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(createLogger({ sink: (l) => lines.push(l) }), { lines });
}
