import { html, type Markup } from "../pages/html.ts";
import type { ApiAnswer, FieldErrors } from "./api.ts";
import { errorSummary, fieldId, postForm } from "./ui.ts";

/**
 * The queue's posting windows as a no-JS grid: one row per time of day with a checkbox per weekday
 * (the API's windows are weekday × time pairs), a remove checkbox per row and an empty row to add a
 * time. Errors point at rows (`/queue/<row>`), whose time input carries that id.
 */
export interface QueueRow {
  time: string;
  days: number[];
  remove: boolean;
}

/** ISO weekdays as the API numbers them (1 = Monday). */
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
/** Rows read from one form at most (the API takes 500 windows). */
const MAX_ROWS = 500;

const rowPointer = (row: number) => `/queue/${row}`;

/** The stored windows, one row per time, earliest first. */
export function queueRowsOf(windows: { weekday: number; local_time: string }[]): QueueRow[] {
  const byTime = new Map<string, number[]>();
  for (const w of windows) byTime.set(w.local_time, [...(byTime.get(w.local_time) ?? []), w.weekday]);
  return [...byTime]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([time, days]) => ({ time, days: days.sort(), remove: false }));
}

/** The rows as posted (`row_count` rows, the last one the "add a time" row). */
export function queueRowsFromForm(form: URLSearchParams): QueueRow[] {
  const count = Math.min(Number.parseInt(form.get("row_count") ?? "0", 10) || 0, MAX_ROWS);
  const rows: QueueRow[] = [];
  for (let i = 0; i < count; i++) {
    const days = form
      .getAll(`day_${i}`)
      .map(Number)
      .filter((d) => Number.isInteger(d) && d >= 1 && d <= 7);
    rows.push({
      time: (form.get(`time_${i}`) ?? "").trim(),
      days: [...new Set(days)].sort(),
      remove: form.has(`remove_${i}`),
    });
  }
  return rows;
}

/**
 * The windows the rows ask for, with the row each came from (to put the API's `/windows/<n>` errors
 * back on their row), or the rows' own errors (a new row with weekdays but no time).
 */
export function windowsOfRows(rows: QueueRow[]): {
  windows: { weekday: number; local_time: string }[];
  rowOfWindow: number[];
  errors: FieldErrors;
} {
  const windows: { weekday: number; local_time: string }[] = [];
  const rowOfWindow: number[] = [];
  const errors: FieldErrors = new Map();
  rows.forEach((row, i) => {
    if (row.remove || (row.time === "" && row.days.length === 0)) return;
    if (row.time === "") return void errors.set(rowPointer(i), "choose a time for the ticked weekdays");
    for (const weekday of row.days) {
      windows.push({ weekday, local_time: row.time });
      rowOfWindow.push(i);
    }
  });
  return { windows, rowOfWindow, errors };
}

/** The API's errors (`/windows/<n>/...`) on the rows they came from; others as the form's problem. */
export function rowErrorsOf(
  answer: ApiAnswer,
  rowOfWindow: number[],
): { errors: FieldErrors; problem: string | null } {
  const errors: FieldErrors = new Map();
  const unplaced: string[] = [];
  for (const e of (answer.body?.errors ?? []) as { pointer?: string; detail?: string }[]) {
    const index = /^\/windows\/(\d+)/.exec(e.pointer ?? "")?.[1];
    const row = index === undefined ? undefined : rowOfWindow[Number(index)];
    const detail = e.pointer?.endsWith("/local_time")
      ? "is not a time of day (HH:MM, 00:00 to 23:59)"
      : (e.detail ?? "is not valid");
    if (row === undefined) unplaced.push(`${e.pointer ?? ""} ${e.detail ?? ""}`.trim());
    else if (!errors.has(rowPointer(row))) errors.set(rowPointer(row), detail);
  }
  const problem = unplaced.length
    ? unplaced.join("; ")
    : errors.size
      ? null
      : (answer.body?.detail ?? "Not saved.");
  return { errors, problem };
}

/** The editor form; the rows shown are `rows` plus one empty row to add a time. */
export function queueEditor(spec: {
  action: string;
  csrf: string;
  timeZone: string;
  rows: QueueRow[];
  errors: FieldErrors;
  problem: string | null;
}): Markup {
  // Row indices stay those of the posted form (errors point at them); an empty last row is the new one.
  const last = spec.rows.at(-1);
  const emptyLast = last !== undefined && last.time === "" && last.days.length === 0;
  const rows = emptyLast ? spec.rows : [...spec.rows, { time: "", days: [], remove: false }];
  const labels = Object.fromEntries(
    rows.map((r, i) => [rowPointer(i), r.time ? `The ${r.time} row` : "The new row"]),
  );
  const line = (row: QueueRow, i: number) => {
    const isNew = i === rows.length - 1;
    const id = fieldId(rowPointer(i));
    const error = spec.errors.get(rowPointer(i));
    const when = row.time || "the new time";
    return html`<tr>
<td><label for="${id}"><span class="visually-hidden">${
      isNew ? "New posting time" : `Posting time ${i + 1}`
    }</span></label>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
<input id="${id}" name="time_${i}" type="time" value="${row.time}"${
      error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ""
    }></td>
${WEEKDAYS.map((day, d) => {
  const dayId = `q-${i}-${d + 1}`;
  return html`<td><input id="${dayId}" type="checkbox" name="day_${i}" value="${d + 1}"${
    row.days.includes(d + 1) ? html` checked` : ""
  }><label for="${dayId}"><span class="visually-hidden">${day} at ${when}</span></label></td>`;
})}
<td>${
      isNew
        ? html`<span class="muted">new</span>`
        : html`<input id="q-${i}-remove" type="checkbox" name="remove_${i}" value="1"${
            row.remove ? html` checked` : ""
          }><label for="q-${i}-remove"><span class="visually-hidden">Remove ${when}</span></label>`
    }</td>
</tr>`;
  };
  return html`${errorSummary(spec.errors, spec.problem, labels)}
${postForm(
  { action: spec.action, csrf: spec.csrf, label: "Queue posting times" },
  html`<input type="hidden" name="row_count" value="${rows.length}">
<div class="table-wrap"><table class="queue-grid">
<caption>Posting times (${spec.timeZone.replaceAll("_", " ")})</caption>
<thead><tr><th scope="col">Time</th>${WEEKDAYS.map(
    (d) => html`<th scope="col"><abbr title="${d}">${d.slice(0, 3)}</abbr></th>`,
  )}<th scope="col">Remove</th></tr></thead>
<tbody>${rows.map(line)}</tbody>
</table></div>
<p class="hint">Tick the weekdays a time is used on; a time with no weekday ticked is dropped. Fill in the
last row to add a time.</p>
<button type="submit">Save posting times</button>`,
)}`;
}
