import { html, type Markup } from "../pages/html.ts";
import { table } from "./ui.ts";

/** One place on a chart's horizontal axis: its full name (tooltips, the table) and a short tick. */
export interface ChartCategory {
  label: string;
  tick: string;
}

/** One series: a legend entry, a value per category. Several series stack, in legend order. */
export interface ChartSeries {
  name: string;
  values: number[];
}

/** A bar chart: what it shows (its accessible name), the unit of its values and what its axis counts. */
export interface ChartSpec {
  /** Unique on the page: the figure's id, and the prefix of its parts' ids. */
  id: string;
  title: string;
  /** The unit of the values, for the vertical axis ("posts", "interactions"). */
  unit: string;
  /** What the horizontal axis counts ("Day of publication, Europe/Berlin"). */
  axis: string;
  categories: ChartCategory[];
  series: ChartSeries[];
  /** The sentence describing the chart, when the default (a range of dates) does not fit. */
  summary?: string;
  /**
   * A few named categories (metrics) rather than dates: every tick printed, and the legend without a
   * sum across them (they count different things).
   */
  categorical?: boolean;
}

/**
 * The top and step of a chart's scale: round steps (1, 2 or 5 times a power of ten, whole numbers
 * since the values are counts) about `lines` of them, the top at or above the largest value.
 */
export function niceScale(largest: number, lines = 4): { top: number; step: number } {
  if (!(largest > 0)) return { top: 1, step: 1 };
  const raw = largest / lines;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!);
  return { top: Math.ceil(largest / step) * step, step };
}

/** A short number for an axis: 1200 → 1.2k, 3000000 → 3M. */
export function shortNumber(value: number): string {
  const abs = Math.abs(value);
  const trim = (n: number) => String(Number(n.toFixed(1)));
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  return String(value);
}

/**
 * Which of `count` ticks to print, and which of them stay on a narrow screen: every `wide`-th fits a
 * laptop (about 12 labels), every `narrow`-th (a multiple of it) a phone (about 5); the first always.
 */
export function tickIndexes(count: number): { index: number; narrow: boolean }[] {
  if (count <= 0) return [];
  const wide = Math.max(1, Math.ceil(count / 12));
  const narrow = wide * Math.max(1, Math.ceil(Math.ceil(count / 5) / wide));
  const ticks: { index: number; narrow: boolean }[] = [];
  for (let i = 0; i < count; i += wide) ticks.push({ index: i, narrow: i % narrow === 0 });
  return ticks;
}

/** A bar's segment: horizontal place and width in percent of the plot, vertical in pixels. */
export interface Segment {
  series: number;
  x: number;
  width: number;
  y: number;
  height: number;
}

/**
 * The segments of a stacked bar chart whose plot is 100% wide and `height` pixels tall (y grows
 * downwards, as in SVG): each category a slot, its bar 70% of it, each series stacked on the previous.
 */
export function stackedBars(series: ChartSeries[], count: number, top: number, height: number): Segment[][] {
  const slot = count ? 100 / count : 100;
  const width = slot * 0.7;
  return Array.from({ length: count }, (_, i) => {
    let base = 0;
    return series.flatMap((s, k) => {
      const value = Math.max(0, s.values[i] ?? 0);
      if (value === 0) return [];
      const from = (base / top) * height;
      base += value;
      const to = (base / top) * height;
      return [
        {
          series: k,
          x: round(i * slot + (slot - width) / 2),
          width: round(width),
          y: round(height - to),
          height: round(to - from),
        },
      ];
    });
  });
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Plot geometry in pixels: room above for the top label, below for the ticks and the axis title. */
const HEIGHT = 260;
const TOP = 22;
const PLOT = 180;

/** The totals per category (the sum of the series). */
function totalsOf(spec: ChartSpec): number[] {
  return spec.categories.map((_, i) => spec.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
}

/** One sentence on what a chart over time shows: its range, the total, the highest. */
export function chartSummary(spec: ChartSpec): string {
  if (spec.summary) return spec.summary;
  if (spec.categories.length === 0) return "Nothing to show.";
  const totals = totalsOf(spec);
  const sum = totals.reduce((a, b) => a + b, 0);
  const first = spec.categories[0]!.label;
  const last = spec.categories.at(-1)!.label;
  const span = spec.categories.length === 1 ? first : `From ${first} to ${last}`;
  if (sum === 0) return `${span}: no ${spec.unit}.`;
  const highest = totals.indexOf(Math.max(...totals));
  return `${span}: ${sum} ${spec.unit} in all, the most (${totals[highest]}) on ${spec.categories[highest]!.label}.`;
}

/**
 * A bar chart as a figure: its title, a legend, an inline SVG that fills the width of the page at any
 * size (places in percent, so its text stays at the page's size) with a scale in round steps, the
 * unit on the top line, dated ticks and the axis named, and the same numbers as a table in a
 * `<details>`. The SVG is an image named by the title and described by the summary sentence.
 */
export function barChart(spec: ChartSpec): Markup {
  const { id } = spec;
  const totals = totalsOf(spec);
  const { top, step } = niceScale(Math.max(0, ...totals));
  const bars = stackedBars(spec.series, spec.categories.length, top, PLOT);
  const count = spec.categories.length;
  const slot = count ? 100 / count : 100;
  const y = (value: number) => round(TOP + PLOT - (value / top) * PLOT);
  const lines: Markup[] = [];
  for (let v = 0; v <= top; v += step) {
    const label = v === top && spec.unit ? `${shortNumber(v)} ${spec.unit}` : shortNumber(v);
    lines.push(html`<line class="grid${v === 0 ? " base" : ""}" x1="0" x2="100%" y1="${y(v)}" y2="${y(v)}"></line>
<text class="y-tick" x="0" y="${y(v) - 4}">${label}</text>`);
  }
  const tip = (i: number, k: number) => {
    const s = spec.series[k]!;
    const name =
      spec.series.length > 1 ? `${s.name}: ${s.values[i] ?? 0} of ${totals[i]}` : `${s.values[i] ?? 0}`;
    return `${spec.categories[i]!.label} · ${spec.series.length > 1 ? name : `${name} ${spec.unit}`.trim()}`;
  };
  const rects = bars.flatMap((segments, i) =>
    segments.map(
      (b) =>
        html`<rect class="s${b.series}" x="${b.x}%" y="${TOP + b.y}" width="${b.width}%" height="${b.height}"><title>${tip(
          i,
          b.series,
        )}</title></rect>`,
    ),
  );
  const printed = spec.categorical
    ? spec.categories.map((_, index) => ({ index, narrow: true }))
    : tickIndexes(count);
  const ticks = printed.map(({ index, narrow }) => {
    // The first tick starts at its slot and the last ends at its own, so neither is cut at an edge.
    const anchor = index === 0 ? "start" : index === count - 1 ? "end" : "middle";
    const x =
      anchor === "start" ? index * slot : anchor === "end" ? (index + 1) * slot : index * slot + slot / 2;
    const tickClass = narrow ? "x-tick" : "x-tick wide-only";
    return html`<text class="${tickClass}" x="${round(x)}%" y="${TOP + PLOT + 18}" text-anchor="${anchor}">${
      spec.categories[index]!.tick
    }</text>`;
  });
  const legend = html`<ul class="legend" aria-label="Legend of ${spec.title}">${spec.series.map(
    (s, k) =>
      html`<li><span class="swatch s${k}" aria-hidden="true"></span>${s.name}${
        spec.categorical ? "" : ` (${s.values.reduce((a, b) => a + b, 0)} in all)`
      }</li>`,
  )}</ul>`;
  const stacked = spec.series.length > 1;
  return html`<figure class="chart-figure" id="${id}">
<figcaption id="${id}-title">${spec.title}</figcaption>
${legend}
<svg class="chart" role="img" aria-labelledby="${id}-title" aria-describedby="${id}-summary" width="100%" height="${HEIGHT}">
${lines}
${rects}
${ticks}
<text class="axis-title" x="50%" y="${HEIGHT - 6}" text-anchor="middle">${spec.axis}</text>
</svg>
<p class="muted chart-summary" id="${id}-summary">${chartSummary(spec)}</p>
<details class="chart-table"><summary>The numbers of this chart</summary>
${table({
  caption: spec.title,
  head: [spec.axis, ...spec.series.map((s) => s.name), ...(stacked ? ["Total"] : [])],
  rows: spec.categories.map((c, i) => [
    c.label,
    ...spec.series.map((s) => String(s.values[i] ?? 0)),
    ...(stacked ? [String(totals[i])] : []),
  ]),
  empty: "Nothing to show.",
})}
</details>
</figure>`;
}
