// A strict reader of the Prometheus text format (0.0.4) for the scrape test: every line must be a
// `# HELP`, a `# TYPE` or a sample of a family declared above it, with valid names, labels and values.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(\\{(.*)\\})? (\\S+)$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = LABEL.exec(rest);
    if (!match) throw new Error(`bad labels in: ${line}`);
    if (match[1]! in labels) throw new Error(`repeated label ${match[1]} in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    rest = rest.slice(match[0].length);
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

/** The family a sample belongs to (histograms' _bucket, _sum and _count belong to theirs). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct) return direct;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  const family = families.get(base);
  return family?.type === "histogram" ? family : undefined;
}

/** Parses a whole exposition, throwing at the first line that is not valid. */
export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  for (const line of text.slice(0, -1).split("\n")) {
    const help = new RegExp(`^# HELP (${NAME}) (.+)$`).exec(line);
    const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (help) {
      if (helps.has(help[1]!)) throw new Error(`second HELP for ${help[1]}`);
      helps.set(help[1]!, help[2]!);
    } else if (type) {
      if (families.has(type[1]!)) throw new Error(`second TYPE for ${type[1]}`);
      if (!helps.has(type[1]!)) throw new Error(`TYPE before HELP for ${type[1]}`);
      families.set(type[1]!, { name: type[1]!, type: type[2]!, help: helps.get(type[1]!)!, samples: [] });
    } else {
      const sample = SAMPLE.exec(line);
      if (!sample) throw new Error(`not a HELP, TYPE or sample line: ${JSON.stringify(line)}`);
      const family = familyOf(sample[1]!, families);
      if (!family) throw new Error(`sample of an undeclared family: ${line}`);
      family.samples.push({
        name: sample[1]!,
        labels: parseLabels(sample[3] ?? "", line),
        value: parseValue(sample[4]!, line),
      });
    }
  }
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

/** Buckets rise with `le`, never decrease, and the +Inf bucket equals _count, per series. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(rest);
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith("_bucket")) entry.buckets.push([parseValue(le!, `le=${le}`), s.value]);
    else if (s.name.endsWith("_count")) entry.count = s.value;
    else if (s.name.endsWith("_sum")) entry.sum = s.value;
    else throw new Error(`histogram ${family.name} has a plain sample ${s.name}`);
  }
  for (const [key, entry] of series) {
    const last = entry.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY)
      throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (last[1] !== entry.count || entry.sum === undefined)
      throw new Error(`${family.name}${key}: +Inf ≠ _count`);
    for (let i = 1; i < entry.buckets.length; i++) {
      const [le, n] = entry.buckets[i]!;
      const [previousLe, previousN] = entry.buckets[i - 1]!;
      if (le <= previousLe || n < previousN) throw new Error(`${family.name}${key}: buckets out of order`);
    }
  }
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
export function valueOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = familyOf(name, families);
  const sample = family?.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return sample?.value ?? 0;
}
