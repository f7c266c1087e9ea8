// Reading an import's CSV: RFC 4180 by csv-parse (quoted commas, quotes and newlines, a BOM, CRLF),
// then the header's columns and the data rows numbered as a spreadsheet shows them.
import { CsvError, parse } from "csv-parse/sync";
import { ProblemError, type FieldError } from "../../core/problem.ts";

/** The columns an import reads, in the order the documentation lists them. */
export const IMPORT_COLUMNS = [
  "group",
  "when",
  "time_zone",
  "channel",
  "destination_id",
  "body",
  "media",
  "first_comment",
] as const;

/** A column of an import. */
export type ImportColumn = (typeof IMPORT_COLUMNS)[number];

/** The most data rows one import takes (a bigger sheet is split into several imports). */
export const MAX_IMPORT_ROWS = 1000;

/** One data row: its spreadsheet number (the header is row 1) and its cells by column. */
export interface CsvRow {
  row: number;
  cells: Partial<Record<ImportColumn, string>>;
  /** How many cells hold something beyond the header's columns (a row longer than the header). */
  extraCells: number;
}

/** The file's columns and its data rows; rows whose every cell is empty are left out (not renumbered). */
export interface ImportSheet {
  columns: ImportColumn[];
  rows: CsvRow[];
}

const isColumn = (name: string): name is ImportColumn => (IMPORT_COLUMNS as readonly string[]).includes(name);

/** 400 with field errors pointing into the sheet. */
function sheetProblem(summary: string, errors: FieldError[]): ProblemError {
  return new ProblemError("public_invalid_request", summary, { errors });
}

/** What a CSV syntax error means for a person, by csv-parse's code. */
function syntaxDetail(error: CsvError): string {
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return 'a quoted cell that starts in this row is never closed (a closing " is missing)';
    case "CSV_INVALID_CLOSING_QUOTE":
      return 'a quoted cell has characters after its closing quote; write a " inside a quoted cell as ""';
    default:
      return `is not valid CSV (${error.message})`;
  }
}

/** Reads the header and data rows; a file that is empty, not CSV, or has a bad header is a 400. */
export function readImportSheet(csv: string): ImportSheet {
  let records: string[][];
  try {
    records = parse(csv, { bom: true, relax_column_count: true, skip_empty_lines: false }) as string[][];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // `records` counts the rows read before the failing one; the header is row 1.
    const row = ((error as CsvError & { records?: number }).records ?? 0) + 1;
    const detail = syntaxDetail(error);
    throw sheetProblem(`The CSV cannot be read at row ${row}: ${detail}.`, [
      { pointer: `/rows/${row}`, code: "custom", detail },
    ]);
  }
  const header = records[0]?.map((name) => name.trim().toLowerCase()) ?? [];
  if (header.every((name) => name === ""))
    throw sheetProblem("The CSV is empty: its first row names the columns.", [
      {
        pointer: "/csv",
        code: "custom",
        detail: `is empty; the first row names the columns (${IMPORT_COLUMNS.join(", ")})`,
      },
    ]);
  const errors = headerErrors(header);
  if (errors.length > 0)
    throw sheetProblem(
      `The CSV's header row does not name the columns an import reads: ${errors
        .map((e) => `${e.pointer} ${e.detail}`)
        .join("; ")}.`,
      errors,
    );
  const rows: CsvRow[] = [];
  for (const [index, record] of records.entries()) {
    if (index === 0 || record.every((cell) => cell.trim() === "")) continue;
    const cells: CsvRow["cells"] = {};
    let extraCells = 0;
    for (const [i, cell] of record.entries()) {
      const name = header[i];
      if (name && isColumn(name)) cells[name] = cell;
      else if (cell.trim() !== "") extraCells++;
    }
    rows.push({ row: index + 1, cells, extraCells });
  }
  if (rows.length === 0)
    throw sheetProblem("The CSV has a header row but no data rows.", [
      { pointer: "/rows/2", code: "custom", detail: "the file has no data rows below its header" },
    ]);
  if (rows.length > MAX_IMPORT_ROWS)
    throw sheetProblem(`The CSV has ${rows.length} data rows; an import takes at most ${MAX_IMPORT_ROWS}.`, [
      {
        pointer: "/csv",
        code: "custom",
        detail: `has ${rows.length} data rows; split it into files of at most ${MAX_IMPORT_ROWS}`,
      },
    ]);
  return { columns: header.filter(isColumn), rows };
}

/** Unknown, repeated and missing columns of the header row (row 1), each at `/rows/1/<column>`. */
function headerErrors(header: string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    // An unnamed column (a spreadsheet's trailing comma) is allowed while its cells are empty.
    if (name === "") continue;
    if (!isColumn(name))
      errors.push({
        pointer: `/rows/1/${pointerToken(name)}`,
        code: "custom",
        detail: `is not a column of an import; the columns are ${IMPORT_COLUMNS.join(", ")}`,
      });
    else if (seen.has(name))
      errors.push({ pointer: `/rows/1/${name}`, code: "custom", detail: "is named twice in the header" });
    seen.add(name);
  }
  for (const name of ["when", "body"] as const)
    if (!seen.has(name))
      errors.push({ pointer: `/rows/1/${name}`, code: "custom", detail: "is a required column" });
  if (!seen.has("destination_id") && !seen.has("channel"))
    errors.push({
      pointer: "/rows/1/destination_id",
      code: "custom",
      detail: "is a required column (drafts may name a channel column instead)",
    });
  return errors;
}

/** RFC 6901 escaping of one reference token. */
function pointerToken(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}
