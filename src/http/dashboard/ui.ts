import { randomBase62 } from "../../lib/crypto.ts";
import { html, Markup } from "../pages/html.ts";
import { csrfField } from "../pages/layout.ts";
import type { FieldErrors } from "./api.ts";

/** ` name="value"` when there is a value, else nothing (optional attributes). */
export function attr(name: string, value: string | number | null | undefined): Markup {
  return value === undefined || value === null || value === "" ? html`` : html` ${name}="${value}"`;
}

/** ` name` when on, else nothing (boolean attributes). */
export function flag(name: string, on: boolean | undefined): Markup {
  return on ? html` ${new Markup(name)}` : html``;
}

/** The id of the control a JSON pointer names (`/body/0/text` → `f-body-0-text`). */
export function fieldId(pointer: string): string {
  return `f${pointer.replace(/[^A-Za-z0-9_]+/g, "-")}`;
}

/** One control's label, hint, error and the control itself, wired together for assistive technology. */
function wrap(
  spec: { pointer: string; label: string; hint?: string; errors?: FieldErrors },
  control: (attributes: Markup) => Markup,
): Markup {
  const id = fieldId(spec.pointer);
  const error = spec.errors?.get(spec.pointer);
  const describedBy = [spec.hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const attributes = html`id="${id}"${describedBy ? html` aria-describedby="${describedBy}"` : ""}${
    error ? html` aria-invalid="true"` : ""
  }`;
  return html`<div class="field">
<label for="${id}">${spec.label}</label>
${spec.hint ? html`<p class="hint" id="${id}-hint">${spec.hint}</p>` : ""}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
${control(attributes)}
</div>`;
}

/** Common settings of a form control: `name` is the form field, `pointer` where the API's errors point. */
export interface ControlSpec {
  name: string;
  pointer: string;
  label: string;
  hint?: string;
  errors?: FieldErrors;
  required?: boolean;
}

/** A text-like input. */
export function input(
  spec: ControlSpec & { value?: string; type?: string; maxlength?: number; extra?: Markup },
): Markup {
  return wrap(
    spec,
    (a) =>
      html`<input ${a} name="${spec.name}" type="${spec.type ?? "text"}" value="${spec.value ?? ""}"${
        spec.required ? html` required` : ""
      }${spec.maxlength ? html` maxlength="${spec.maxlength}"` : ""}${spec.extra ?? ""}>`,
  );
}

/** A multi-line text field. */
export function textarea(spec: ControlSpec & { value?: string; rows?: number; maxlength?: number }): Markup {
  const limits = html`${flag("required", spec.required)}${attr("maxlength", spec.maxlength)}`;
  return wrap(
    spec,
    (a) =>
      html`<textarea ${a} name="${spec.name}" rows="${spec.rows ?? 4}"${limits}>${spec.value ?? ""}</textarea>`,
  );
}

/** A select of `[value, label]` options. */
export function select(spec: ControlSpec & { options: [string, string][]; value?: string }): Markup {
  return wrap(
    spec,
    (a) =>
      html`<select ${a} name="${spec.name}"${spec.required ? html` required` : ""}>${spec.options.map(
        ([value, label]) =>
          html`<option value="${value}"${value === spec.value ? html` selected` : ""}>${label}</option>`,
      )}</select>`,
  );
}

/** A group of checkboxes or radios in a fieldset with a legend. */
export function choices(spec: {
  name: string;
  pointer: string;
  legend: string;
  type: "checkbox" | "radio";
  options: { value: string; label: string; hint?: string }[];
  checked: string[];
  errors?: FieldErrors;
}): Markup {
  const id = fieldId(spec.pointer);
  const error = spec.errors?.get(spec.pointer);
  return html`<fieldset class="field choices" id="${id}"${error ? html` aria-describedby="${id}-error"` : ""}>
<legend>${spec.legend}</legend>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
${spec.options.map((o, i) => {
  const optionId = `${id}-${i}`;
  const checked = flag("checked", spec.checked.includes(o.value));
  const hint = o.hint ? html` <span class="hint">${o.hint}</span>` : "";
  return html`<div class="choice"><input id="${optionId}" type="${spec.type}"
name="${spec.name}" value="${o.value}"${checked}> <label for="${optionId}">${o.label}</label>${hint}</div>`;
})}
</fieldset>`;
}

/**
 * A POST form with its CSRF token and a one-time `idempotency_key`: sending the same form twice (a
 * double click, a reload) replays the first answer instead of acting twice.
 */
export function postForm(
  spec: {
    action: string;
    csrf: string;
    className?: string;
    label?: string;
    multipart?: boolean;
    /** A question the dashboard's script asks before sending (`data-confirm`). */
    confirm?: string;
  },
  content: Markup,
): Markup {
  return html`<form method="post" action="${spec.action}"${attr("class", spec.className)}${attr(
    "aria-label",
    spec.label,
  )}${attr("enctype", spec.multipart ? "multipart/form-data" : null)}${attr("data-confirm", spec.confirm)}>
${csrfField(spec.csrf)}<input type="hidden" name="idempotency_key" value="${randomBase62(24)}">
${content}
</form>`;
}

/** A one-button form (revoke, cancel, retry …). */
export function buttonForm(spec: {
  action: string;
  csrf: string;
  label: string;
  /** Words of the button's accessible name that are not shown (after `label`). */
  hiddenLabel?: string;
  secondary?: boolean;
  danger?: boolean;
  fields?: Record<string, string>;
  confirm?: string;
}): Markup {
  const cls = spec.danger ? "danger" : spec.secondary ? "secondary" : "";
  return postForm(
    { action: spec.action, csrf: spec.csrf, className: "inline", confirm: spec.confirm },
    html`${Object.entries(spec.fields ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    )}<button type="submit"${cls ? html` class="${cls}"` : ""}>${spec.label}${
      spec.hiddenLabel ? html`<span class="visually-hidden">${spec.hiddenLabel}</span>` : ""
    }</button>`,
  );
}

/** The problems of a form that came back, each linking to its field; the API's detail when no field. */
export function errorSummary(
  errors: FieldErrors,
  fallback?: string | null,
  labels?: Record<string, string>,
): Markup {
  if (errors.size === 0 && !fallback) return html``;
  const items = [...errors].map(([pointer, detail]) => {
    const label = labels?.[pointer] ?? (pointer || "The request");
    return html`<li><a href="#${fieldId(pointer)}">${label}: ${detail}</a></li>`;
  });
  return html`<div class="errors" role="alert" aria-labelledby="errors-title">
<h2 id="errors-title">There is a problem</h2>
${fallback ? html`<p>${fallback}</p>` : ""}
${items.length ? html`<ul>${items}</ul>` : ""}
</div>`;
}

/** A table with a caption (visually hidden when `hideCaption`), header cells and rows. */
export function table(spec: {
  caption: string;
  hideCaption?: boolean;
  head: string[];
  rows: (string | Markup | null)[][];
  empty: string | Markup;
}): Markup {
  if (spec.rows.length === 0) return html`<p class="muted">${spec.empty}</p>`;
  // A table wider than a phone scrolls sideways in its wrapper: a named region a keyboard can reach.
  return html`<div class="table-wrap" role="region" tabindex="0" aria-label="${spec.caption}"><table>
<caption${spec.hideCaption ? html` class="visually-hidden"` : ""}>${spec.caption}</caption>
<thead><tr>${spec.head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${spec.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell ?? "—"}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A small status badge. */
export function badge(text: string, tone: "ok" | "warn" | "danger" | "neutral" = "neutral"): Markup {
  return html`<span class="badge ${tone}">${text}</span>`;
}

/** Previous/next links of a cursor-paged list (`has_more`, `next_cursor`). */
export function pager(
  path: string,
  query: URLSearchParams,
  page: { has_more?: boolean; next_cursor?: string | null },
): Markup {
  if (!page.has_more || !page.next_cursor) return html``;
  const next = new URLSearchParams(query);
  next.set("after", page.next_cursor);
  next.delete("notice");
  return html`<p class="pager"><a href="${path}?${next.toString()}">Older</a></p>`;
}
