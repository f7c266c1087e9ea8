// Each benchmark records the figures that have a target here as it measures them; `npm run bench`
// (bench/run.ts) writes the table of targets at the top of docs/benchmarks.md from these records,
// so the table is the results of the same run, never typed by hand.

/** One measured figure against its target, on one engine. */
export interface TargetRecord {
  /** What is measured, e.g. "Create Post, PostgreSQL ÷ SQLite". The same text on both engines. */
  measure: string;
  /** "SQLite", "PostgreSQL", or "both" for a figure that compares the engines. */
  engine: string;
  /** The figure as shown, e.g. "0.31 × (1,256 ÷ 4,558 req/s)". */
  figure: string;
  /** The target as the issue writes it, e.g. "≥ 0.8 ×". */
  target: string;
  met: boolean;
}

const records: TargetRecord[] = [];

/** Records a figure for the targets table; returns "met" or "missed" for the benchmark's own table. */
export function recordTarget(record: TargetRecord): "met" | "missed" {
  records.push(record);
  return record.met ? "met" : "missed";
}

/** The recorded targets, one row per measure, with a column per engine (in the order measured). */
export function targetsTable(): string {
  const engines = [...new Set(records.map((r) => r.engine))];
  const measures = [...new Set(records.map((r) => r.measure))];
  const lines = [
    `| Measure | ${engines.map((e) => (e === "both" ? "Both engines" : e)).join(" | ")} | Target | |`,
    `|---|${engines.map(() => "---|").join("")}---|---|`,
  ];
  for (const measure of measures) {
    const rows = records.filter((r) => r.measure === measure);
    const cells = engines.map((engine) => rows.find((r) => r.engine === engine)?.figure ?? "—");
    const verdicts = new Set(rows.map((r) => r.met));
    const verdict =
      verdicts.size === 2
        ? `met on ${rows
            .filter((r) => r.met)
            .map((r) => r.engine)
            .join(", ")}`
        : rows[0]!.met
          ? "met"
          : "missed";
    lines.push(`| ${measure} | ${cells.join(" | ")} | ${rows[0]!.target} | ${verdict} |`);
  }
  return lines.join("\n");
}
