import { html, type Markup } from "../pages/html.ts";

/** One bar of a chart: its full label (the bar's tooltip), a short one for the axis, its value. */
export interface ChartPoint {
  label: string;
  tick?: string;
  value: number;
}

/**
 * The top of a chart's scale: the smallest "nice" number (1, 2 or 5 times a power of ten) at or
 * above the largest value, so the axis reads in round steps. At least 1, so an all-zero chart draws.
 */
export function niceMax(largest: number): number {
  if (!(largest > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(largest));
  for (const step of [1, 2, 5, 10]) if (step * power >= largest) return step * power;
  return 10 * power;
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

/** Which of `count` labels to print under the axis: at most `room`, evenly spaced, the first always. */
export function labelIndexes(count: number, room: number): number[] {
  if (count <= 0) return [];
  const every = Math.max(1, Math.ceil(count / Math.max(1, room)));
  const picked: number[] = [];
  for (let i = 0; i < count; i += every) picked.push(i);
  return picked;
}

/** Where each bar goes inside a plot `width` × `height` wide (y grows downwards, as in SVG). */
export function barGeometry(
  points: ChartPoint[],
  width: number,
  height: number,
): { x: number; y: number; width: number; height: number }[] {
  const top = niceMax(Math.max(0, ...points.map((p) => p.value)));
  const slot = points.length ? width / points.length : width;
  const barWidth = Math.max(1, slot * 0.7);
  return points.map((p, i) => {
    const h = (Math.max(0, p.value) / top) * height;
    return {
      x: round(i * slot + (slot - barWidth) / 2),
      y: round(height - h),
      width: round(barWidth),
      height: round(h),
    };
  });
}

const round = (n: number) => Math.round(n * 10) / 10;

const WIDTH = 320;
const HEIGHT = 120;
const LEFT = 34;
const BOTTOM = 18;
const TOP = 8;

/**
 * A small bar chart as inline SVG, named by its `<title>` (and `aria-labelledby`) for assistive
 * technology; the page shows the same numbers in a table, which is the accessible equivalent.
 * `id` must be unique on the page.
 */
export function barChart(spec: { id: string; title: string; points: ChartPoint[] }): Markup {
  const plotWidth = WIDTH - LEFT - 4;
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const top = niceMax(Math.max(0, ...spec.points.map((p) => p.value)));
  const bars = barGeometry(spec.points, plotWidth, plotHeight);
  const slot = spec.points.length ? plotWidth / spec.points.length : plotWidth;
  const labels = labelIndexes(spec.points.length, Math.floor(plotWidth / 48));
  const axis = html`<line x1="0" y1="${plotHeight}" x2="${plotWidth}" y2="${plotHeight}" stroke="currentColor"
 stroke-opacity="0.4"></line>`;
  const tooltip = (i: number) => html`<title>${spec.points[i]!.label}: ${spec.points[i]!.value}</title>`;
  const size = html`viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}"`;
  return html`<svg class="chart" role="img" aria-labelledby="${spec.id}-title" ${size}>
<title id="${spec.id}-title">${spec.title}</title>
<g transform="translate(${LEFT} ${TOP})">
${axis}
<text x="-4" y="4" text-anchor="end">${shortNumber(top)}</text>
<text x="-4" y="${plotHeight}" text-anchor="end">0</text>
${bars.map(
  (b, i) =>
    html`<rect x="${b.x}" y="${b.y}" width="${b.width}" height="${b.height}" fill="currentColor">${tooltip(
      i,
    )}</rect>`,
)}
${labels.map(
  (i) =>
    html`<text x="${round(i * slot + slot / 2)}" y="${plotHeight + 13}" text-anchor="middle">${
      spec.points[i]!.tick ?? spec.points[i]!.label
    }</text>`,
)}
</g>
</svg>`;
}
