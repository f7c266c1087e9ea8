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

/** A byte count for people (`12.0 MiB`, `512 B`). */
export function bytes(n: number | null | undefined): string | null {
  if (n === null || n === undefined) return null;
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
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
