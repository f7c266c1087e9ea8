import { DomUtils, parseDocument } from "htmlparser2";
import type { AnyNode, Element } from "domhandler";

/**
 * What a person sees on a server-rendered page, queried the way assistive technology reads it: by role
 * and accessible name, by label, by text. Tests ask "is there a button named Revoke Acme key" rather than
 * "does the HTML contain `<button`", so they survive layout changes and fail when what is shown changes.
 *
 * Roles are the HTML elements' implicit ARIA roles (an explicit `role` wins); names follow the accessible
 * name computation in its common cases: `aria-labelledby`, `aria-label`, a `<label>` for a control, a
 * table's `<caption>`, a fieldset's `<legend>`, an image's `alt`, the content for roles named from
 * content, then `title`. Hidden content (`hidden`, `aria-hidden="true"`, `<template>`) is not seen.
 */

/** A name to match: the exact text (whitespace collapsed) or a pattern. */
export type NameMatcher = string | RegExp;

export interface RoleQuery {
  name?: NameMatcher;
  /** A heading's level (h1 = 1). */
  level?: number;
  /** Whether a checkbox or radio is checked, or an option selected. */
  checked?: boolean;
  /** Include hidden elements (a control the script reveals). */
  hidden?: boolean;
}

const NAMED_FROM_CONTENT = new Set([
  "button",
  "link",
  "heading",
  "cell",
  "columnheader",
  "rowheader",
  "option",
  "row",
  "listitem",
  "tab",
  "checkbox",
  "radio",
  "menuitem",
  "tooltip",
  "status",
  "alert",
  "term",
  "definition",
  "caption",
]);

const INPUT_ROLES: Record<string, string | null> = {
  button: "button",
  submit: "button",
  reset: "button",
  image: "button",
  checkbox: "checkbox",
  radio: "radio",
  range: "slider",
  number: "spinbutton",
  search: "searchbox",
  hidden: null,
  file: null,
  password: null,
  color: null,
  date: null,
  "datetime-local": null,
  month: null,
  time: null,
  week: null,
};

const SECTIONING = new Set(["article", "aside", "main", "nav", "section"]);

const collapse = (text: string) => text.replace(/\s+/g, " ").trim();

function attr(el: Element, name: string): string | undefined {
  return el.attribs[name];
}

function closest(el: Element, test: (e: Element) => boolean): Element | null {
  for (let p = el.parent; p; p = p.parent) if (p.type === "tag" && test(p as Element)) return p as Element;
  return null;
}

/** The element's role: its `role` attribute, else the implicit role of its tag (null for none). */
export function roleOf(el: Element): string | null {
  const explicit = attr(el, "role")?.trim().split(/\s+/)[0];
  if (explicit) return explicit;
  switch (el.name) {
    case "a":
    case "area":
      return attr(el, "href") === undefined ? null : "link";
    case "button":
      return "button";
    case "input": {
      const type = (attr(el, "type") ?? "text").toLowerCase();
      if (type in INPUT_ROLES) return INPUT_ROLES[type]!;
      return attr(el, "list") === undefined ? "textbox" : "combobox";
    }
    case "textarea":
      return "textbox";
    case "select":
      return attr(el, "multiple") !== undefined || Number(attr(el, "size") ?? 1) > 1 ? "listbox" : "combobox";
    case "option":
      return "option";
    case "h1":
    case "h2":
    case "h3":
    case "h4":
    case "h5":
    case "h6":
      return "heading";
    case "table":
      return "table";
    case "caption":
      return "caption";
    case "tr":
      return "row";
    case "td":
      return "cell";
    case "th":
      return attr(el, "scope") === "row" ? "rowheader" : "columnheader";
    case "ul":
    case "ol":
    case "menu":
      return "list";
    case "li":
      return "listitem";
    case "dl":
      return null;
    case "dt":
      return "term";
    case "dd":
      return "definition";
    case "nav":
      return "navigation";
    case "main":
      return "main";
    case "header":
      return closest(el, (p) => SECTIONING.has(p.name)) ? null : "banner";
    case "footer":
      return closest(el, (p) => SECTIONING.has(p.name)) ? null : "contentinfo";
    case "aside":
      return "complementary";
    case "section":
      return hasOwnName(el) ? "region" : null;
    case "form":
      return hasOwnName(el) ? "form" : null;
    case "fieldset":
      return "group";
    case "details":
      return "group";
    case "dialog":
      return "dialog";
    case "article":
      return "article";
    case "img":
      return attr(el, "alt") === "" ? "presentation" : "img";
    case "progress":
      return "progressbar";
    case "output":
      return "status";
    case "hr":
      return "separator";
    case "time":
      return "time";
    case "code":
      return "code";
    case "p":
      return "paragraph";
    case "strong":
      return "strong";
    case "em":
      return "emphasis";
    default:
      return null;
  }
}

const hasOwnName = (el: Element) =>
  attr(el, "aria-label") !== undefined || attr(el, "aria-labelledby") !== undefined;

function isHiddenSelf(el: Element): boolean {
  if (attr(el, "hidden") !== undefined || attr(el, "aria-hidden") === "true") return true;
  if (el.name === "template" || el.name === "script" || el.name === "style") return true;
  return el.name === "input" && (attr(el, "type") ?? "").toLowerCase() === "hidden";
}

/** Whether the element is hidden from a person (itself or an ancestor). */
export function isHidden(el: Element): boolean {
  if (isHiddenSelf(el)) return true;
  return closest(el, isHiddenSelf) !== null;
}

const isTag = (node: AnyNode): node is Element =>
  node.type === "tag" || node.type === "script" || node.type === "style";

/** Text a person reads in the element (hidden parts left out, images by their alt text). */
function visibleText(node: AnyNode): string {
  if (node.type === "text") return (node as unknown as { data: string }).data;
  if (!isTag(node)) return "";
  if (isHiddenSelf(node)) return "";
  if (node.name === "img") return attr(node, "alt") ?? "";
  if (node.name === "br") return "\n";
  const inner = node.children.map(visibleText).join("");
  // Block-level boundaries separate words, as a rendered page does.
  return /^(p|div|li|tr|td|th|h[1-6]|dt|dd|section|article|ul|ol|table|caption|label|legend|option)$/.test(
    node.name,
  )
    ? ` ${inner} `
    : inner;
}

/** A label's text as it names a control: an embedded select says its chosen option, a field its value. */
function labelText(node: AnyNode): string {
  if (!isTag(node)) return visibleText(node);
  if (isHiddenSelf(node)) return "";
  if (node.name === "select") {
    const options = DomUtils.findAll((o) => o.name === "option", [node]);
    const chosen = options.find((o) => attr(o, "selected") !== undefined) ?? options[0];
    return chosen ? ` ${textOf(chosen)} ` : "";
  }
  if (node.name === "input" || node.name === "textarea") return ` ${valueOf(node)} `;
  return node.children.map(labelText).join("");
}

/** The text content of a node, whitespace collapsed. */
export function textOf(node: AnyNode): string {
  return collapse(visibleText(node));
}

export class Screen {
  private readonly ids = new Map<string, Element>();
  private readonly all: Element[];

  constructor(
    private readonly root: AnyNode[],
    private readonly document: AnyNode[] = root,
  ) {
    this.all = DomUtils.findAll(() => true, root);
    for (const el of DomUtils.findAll((e) => attr(e, "id") !== undefined, document))
      if (!this.ids.has(attr(el, "id")!)) this.ids.set(attr(el, "id")!, el);
  }

  /** The element with this id anywhere on the page (ids of the whole page, even within a part). */
  byId(id: string): Element | null {
    return this.ids.get(id) ?? null;
  }

  /** The accessible name of an element. */
  nameOf(el: Element): string {
    const labelledBy = attr(el, "aria-labelledby");
    if (labelledBy)
      return collapse(
        labelledBy
          .split(/\s+/)
          .map((id) => {
            const target = this.byId(id);
            return target ? textOf(target) : "";
          })
          .join(" "),
      );
    const label = attr(el, "aria-label");
    if (label !== undefined && label.trim()) return collapse(label);
    if (el.name === "input" || el.name === "select" || el.name === "textarea") {
      const type = (attr(el, "type") ?? "").toLowerCase();
      if (["submit", "button", "reset"].includes(type))
        return collapse(
          attr(el, "value") ?? (type === "submit" ? "Submit" : type === "reset" ? "Reset" : ""),
        );
      if (type === "image") return collapse(attr(el, "alt") ?? "");
      const labels = this.labelsOf(el);
      if (labels.length) return collapse(labels.map(labelText).join(" "));
    }
    if (el.name === "table") {
      const caption = el.children.find((c): c is Element => isTag(c) && c.name === "caption");
      if (caption) return textOf(caption);
    }
    if (el.name === "fieldset") {
      const legend = el.children.find((c): c is Element => isTag(c) && c.name === "legend");
      if (legend) return textOf(legend);
    }
    if (el.name === "details") {
      const summary = el.children.find((c): c is Element => isTag(c) && c.name === "summary");
      if (summary) return textOf(summary);
    }
    if (el.name === "img") return collapse(attr(el, "alt") ?? "");
    if (el.name === "svg") {
      const title = el.children.find((c): c is Element => isTag(c) && c.name === "title");
      if (title) return textOf(title);
    }
    const role = roleOf(el);
    if (role && NAMED_FROM_CONTENT.has(role)) {
      // Its own content even when the element itself is hidden (asked for with `hidden: true`).
      const text = collapse(el.children.map(visibleText).join(""));
      if (text) return text;
    }
    return collapse(attr(el, "title") ?? "");
  }

  /** The accessible description of an element: the text of what `aria-describedby` names (hint, error). */
  descriptionOf(el: Element): string {
    const ids = attr(el, "aria-describedby")?.split(/\s+/) ?? [];
    return collapse(ids.map((id) => (this.byId(id) ? textOf(this.byId(id)!) : "")).join(" "));
  }

  /** The `<label>` elements of a form control: `for` its id, or around it. */
  private labelsOf(el: Element): Element[] {
    const id = attr(el, "id");
    const labels = DomUtils.findAll((l) => l.name === "label", this.document).filter(
      (l) =>
        (id !== undefined && attr(l, "for") === id) ||
        (attr(l, "for") === undefined && DomUtils.findOne((c) => c === el, l.children) !== null),
    );
    return labels;
  }

  /** Every element with this role (and name, level, state) a person can perceive, in page order. */
  getAllByRole(role: string, query: RoleQuery = {}): Element[] {
    return this.all.filter((el) => {
      if (roleOf(el) !== role) return false;
      if (!query.hidden && isHidden(el)) return false;
      if (
        query.level !== undefined &&
        el.name !== `h${query.level}` &&
        attr(el, "aria-level") !== String(query.level)
      )
        return false;
      if (query.checked !== undefined && checkedOf(el) !== query.checked) return false;
      return query.name === undefined || matches(this.nameOf(el), query.name);
    });
  }

  /** The one element with this role and name; fails (with the names there are) unless exactly one. */
  getByRole(role: string, query: RoleQuery = {}): Element {
    const found = this.getAllByRole(role, query);
    if (found.length !== 1) {
      const names = this.getAllByRole(role, { ...query, name: undefined }).map((el) => this.nameOf(el));
      throw new Error(
        `expected one ${role}${query.name === undefined ? "" : ` named ${String(query.name)}`}, ` +
          `found ${found.length}; the ${role}s are: ${JSON.stringify(names)}`,
      );
    }
    return found[0]!;
  }

  /** The element with this role and name, or null (fails if there are several). */
  queryByRole(role: string, query: RoleQuery = {}): Element | null {
    const found = this.getAllByRole(role, query);
    if (found.length > 1)
      throw new Error(`expected at most one ${role} named ${String(query.name)}, found ${found.length}`);
    return found[0] ?? null;
  }

  /** The accessible names of every element with this role, in page order. */
  namesOf(role: string, query: RoleQuery = {}): string[] {
    return this.getAllByRole(role, query).map((el) => this.nameOf(el));
  }

  /** The form control a person finds by this label (a `<label>`, `aria-label` or `aria-labelledby`). */
  getByLabelText(label: NameMatcher): Element {
    const controls = this.all.filter(
      (el) =>
        ["input", "select", "textarea"].includes(el.name) &&
        !isHiddenInput(el) &&
        matches(this.nameOf(el), label),
    );
    if (controls.length !== 1) {
      const names = this.all
        .filter((el) => ["input", "select", "textarea"].includes(el.name) && !isHiddenInput(el))
        .map((el) => this.nameOf(el));
      throw new Error(
        `expected one control labelled ${String(label)}, found ${controls.length}; labels: ${JSON.stringify(names)}`,
      );
    }
    return controls[0]!;
  }

  /** The control labelled so, or null. */
  queryByLabelText(label: NameMatcher): Element | null {
    return (
      this.all.find(
        (el) =>
          ["input", "select", "textarea"].includes(el.name) &&
          !isHiddenInput(el) &&
          matches(this.nameOf(el), label),
      ) ?? null
    );
  }

  /** Every element here with one of these tag names (all without names), in page order. */
  elements(...names: string[]): Element[] {
    return names.length ? this.all.filter((el) => names.includes(el.name)) : [...this.all];
  }

  /** The part of the page inside `el` (its ids and labels still resolve across the whole page). */
  within(el: Element): Screen {
    return new Screen([el], this.document);
  }

  /** The text a person reads in this part of the page, whitespace collapsed. */
  text(): string {
    return collapse(this.root.map(visibleText).join(""));
  }

  /** The terms of the description lists here, each with the text of the description that follows it. */
  definitions(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const term of DomUtils.findAll((e) => e.name === "dt", this.root)) {
      let next = term.next;
      while (next && !(isTag(next) && next.name === "dd")) next = next.next;
      if (next) out[textOf(term)] = textOf(next);
    }
    return out;
  }

  /** The exact text of each preformatted block here (`<pre>`), whitespace kept. */
  preformatted(): string[] {
    return DomUtils.findAll((e) => e.name === "pre", this.root).map((pre) => DomUtils.textContent(pre));
  }

  /** A table's body rows, each as its cells' text by column header. */
  recordsOf(table: Element): Record<string, string>[] {
    const [head, ...rows] = this.rowsOf(table);
    return rows.map((cells) => Object.fromEntries(cells.map((text, i) => [head?.[i] ?? String(i), text])));
  }

  /** A table's rows as the text of their cells (header row included). */
  rowsOf(table: Element): string[][] {
    return DomUtils.findAll((e) => e.name === "tr", [table]).map((tr) =>
      tr.children.filter((c): c is Element => isTag(c) && (c.name === "td" || c.name === "th")).map(textOf),
    );
  }
}

const isHiddenInput = (el: Element) =>
  el.name === "input" && (attr(el, "type") ?? "").toLowerCase() === "hidden";

function checkedOf(el: Element): boolean {
  if (el.name === "option") return attr(el, "selected") !== undefined;
  const aria = attr(el, "aria-checked") ?? attr(el, "aria-selected");
  if (aria !== undefined) return aria === "true";
  return attr(el, "checked") !== undefined;
}

function matches(name: string, matcher: NameMatcher): boolean {
  return typeof matcher === "string" ? name === collapse(matcher) : matcher.test(name);
}

/** A control's current value as the browser would submit it (a select's chosen option, a box's text). */
export function valueOf(el: Element): string {
  if (el.name === "textarea") return DomUtils.textContent(el).replace(/^\n/, "");
  if (el.name === "select") {
    const options = DomUtils.findAll((o) => o.name === "option", [el]);
    const chosen = options.find((o) => attr(o, "selected") !== undefined) ?? options[0];
    return chosen ? (attr(chosen, "value") ?? DomUtils.textContent(chosen)) : "";
  }
  return attr(el, "value") ?? "";
}

/** The form an element belongs to (its closest `<form>`), or null. */
export function formOf(el: Element): Element | null {
  return closest(el, (p) => p.name === "form");
}

/** An attribute of an element (decoded), or undefined. */
export function attributeOf(el: Element, name: string): string | undefined {
  return attr(el, name);
}

/** Parses a page for queries. */
export function screenOf(html: string): Screen {
  return new Screen(parseDocument(html).children);
}
