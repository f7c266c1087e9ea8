// How the client prints: aligned tables and "label  value" blocks for people, JSON for programs.

/** Cells of a table; null and undefined print as "-". */
export type Cell = string | number | boolean | null | undefined;

function cellText(value: Cell): string {
  if (value === null || value === undefined || value === "") return "-";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

/**
 * An aligned table: upper-case headers, columns two spaces apart, the last column unpadded; `empty`
 * is printed instead when there are no rows.
 */
export function table(columns: string[], rows: Cell[][], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((r) => r.map(cellText))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Labelled values, one a line, the values aligned. */
export function fields(pairs: [string, Cell][]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${cellText(value)}`).join("\n");
}

/** A timestamp without its milliseconds (`2026-03-02T10:00:00Z`); null stays null. */
export function time(value: string | null | undefined): string | null {
  return value ? value.replace(/\.\d{3}Z$/, "Z") : null;
}

/** Text on one line, cut to `max` characters with an ellipsis. */
export function clip(text: string, max = 48): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * A byte count for people, in the unit that fits (`512 B`, `43.9 KiB`, `12.0 MiB`, `1.5 GiB`): the one
 * formatter of sizes the CLI prints (progress, summaries, lists).
 */
export function byteSize(n: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  if (n < 1024) return `${Math.round(n)} B`;
  let value = n / 1024;
  let unit = 0;
  // Past 1023.95 the value would print as "1024.0": the next unit then.
  while (value >= 1023.95 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A byte count for people, or null when there is none. */
export function bytes(n: number | null | undefined): string | null {
  return n === null || n === undefined ? null : byteSize(n);
}

/** What --json prints: the API's own object, indented. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** The hint under a page that has more: the same command with --after. */
export function moreHint(
  listing: { has_more: boolean; next_cursor: string | null },
  command: string,
): string {
  return listing.has_more && listing.next_cursor
    ? `\n(more: ${command} --after ${listing.next_cursor}, or --all)`
    : "";
}

/** What a command prints on stdout, with an exit code other than 0 when it is not a plain success. */
export type CommandOutput = string | { stdout: string; exitCode: number };
