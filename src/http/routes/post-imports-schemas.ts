import { t } from "elysia";
import { IMPORT_COLUMNS } from "../../modules/post-imports/csv.ts";
import { Closed, Nullable } from "./common-schemas.ts";

const SAMPLE_CSV = "group,when,channel,body\nlaunch-2026-12,draft,mastodon,Herald 2.0 is out.\n";

/** Body of `POST {ws}/post-imports`: the CSV text, whether to only judge it, and the confirmation. */
export const PostImportBody = Closed(
  {
    csv: t.String({
      description:
        "The CSV file's text (RFC 4180; a BOM and CRLF are fine). Row 1 names the columns: " +
        `${IMPORT_COLUMNS.join(", ")}; when, body and destination_id (or, for drafts, channel) are required.`,
      examples: [SAMPLE_CSV],
    }),
    dry_run: t.Optional(
      t.Boolean({ description: "Judge every row and store nothing (200).", examples: [true] }),
    ),
    confirmed: t.Optional(
      t.Boolean({ description: "Must be true when a row publishes or schedules (its when is not draft)." }),
    ),
  },
  { title: "PostImportRequest", examples: [{ csv: SAMPLE_CSV, dry_run: true }] },
);

/** One problem of a row: its column (null: the row as a whole), Create Post's problem code, what. */
const PostImportRowError = t.Object(
  {
    column: Nullable(t.Union(IMPORT_COLUMNS.map((c) => t.Literal(c)))),
    code: t.String(),
    detail: t.String(),
  },
  { title: "PostImportRowError" },
);

/** One row as judged: its spreadsheet number (header = 1), whether it is valid, the posts it made. */
export const PostImportRow = t.Object(
  {
    row: t.Integer({ minimum: 2 }),
    valid: t.Boolean(),
    errors: t.Array(PostImportRowError),
    post_ids: t.Array(t.String(), {
      description: "The post the row made (empty for a dry run or a refusal).",
    }),
  },
  { title: "PostImportRow" },
);

/** The answer of an import or its dry run. */
export const PostImport = t.Object(
  {
    object: t.Literal("post_import"),
    id: t.String(),
    dry_run: t.Boolean(),
    rows: t.Array(PostImportRow),
  },
  { title: "PostImport" },
);
