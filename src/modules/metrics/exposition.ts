// A small Prometheus text-format (0.0.4) writer: counters and histograms kept in memory, gauges
// handed in at scrape time. Herald needs no more than this, so no client library is loaded.

export type Labels = Record<string, string>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** `{a="1",b="2"}` in the order given, or "" for no labels. */
export function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    for (const l of labelNames) if (!LABEL.test(l) || l === "le") throw new Error(`bad label ${l}`);
  }

  /** The series key of a label set (every declared label, in declared order). */
  protected key(labels: Labels): string {
    return JSON.stringify(this.labelNames.map((l) => labels[l] ?? ""));
  }

  protected labelsOf(key: string): Labels {
    const values = JSON.parse(key) as string[];
    return Object.fromEntries(this.labelNames.map((l, i) => [l, values[i]!]));
  }

  protected header(type: string): string[] {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${type}`];
  }

  abstract render(): string[];
}

export class Counter extends Metric {
  private readonly values = new Map<string, number>();

  inc(labels: Labels = {}, by = 1): void {
    const key = this.key(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  render(): string[] {
    const lines = this.header("counter");
    for (const [key, value] of this.values)
      lines.push(`${this.name}${labelText(this.labelsOf(key))} ${formatValue(value)}`);
    return lines;
  }
}

export class Histogram extends Metric {
  private readonly series = new Map<string, { buckets: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  observe(labels: Labels, value: number): void {
    const key = this.key(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { buckets: this.bounds.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) s.buckets[i]! += 1;
    s.sum += value;
    s.count += 1;
  }

  render(): string[] {
    const lines = this.header("histogram");
    for (const [key, s] of this.series) {
      const labels = this.labelsOf(key);
      this.bounds.forEach((bound, i) =>
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: formatValue(bound) })} ${s.buckets[i]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${formatValue(s.sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${s.count}`);
    }
    return lines;
  }
}

/** A gauge whose samples are read at scrape time. */
export function renderGauge(
  name: string,
  help: string,
  samples: { labels?: Labels; value: number }[],
): string[] {
  if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
  return [
    `# HELP ${name} ${escapeHelp(help)}`,
    `# TYPE ${name} gauge`,
    ...samples.map((s) => `${name}${labelText(s.labels ?? {})} ${formatValue(s.value)}`),
  ];
}
