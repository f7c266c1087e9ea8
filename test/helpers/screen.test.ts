// The accessible queries the dashboard tests rely on: roles, names, labels, hidden parts, descriptions.
import { describe, expect, test } from "bun:test";
import { attributeOf, formOf, screenOf, valueOf } from "./screen.ts";

const PAGE = `<!doctype html><html><head><title>T · Herald</title></head><body>
<header><form method="post" action="/logout"><button type="submit">Sign out</button></form></header>
<nav aria-label="Main"><a href="/a" aria-current="page">Overview</a><a href="/b">Keys</a></nav>
<main><h1>Acme &amp; Co</h1>
<div role="alert" aria-labelledby="t"><h2 id="t">There is a problem</h2><a href="#f-name">Name: is required</a></div>
<form method="post" action="/save" aria-label="Settings">
<label for="f-name">Name</label><p id="f-name-hint">1 to 100 characters.</p><p id="f-name-error">is required</p>
<input id="f-name" name="name" value="Ada &#38; Bo" aria-describedby="f-name-hint f-name-error" aria-invalid="true">
<label>Role <select name="role"><option value="m">Member</option><option value="o" selected>Owner</option></select></label>
<fieldset><legend>Events</legend><input id="e1" type="checkbox" checked><label for="e1">post.published</label>
<input id="e2" type="checkbox"><label for="e2">post.failed</label></fieldset>
<input type="hidden" name="csrf_token" value="x">
<button type="submit">Remove<span class="visually-hidden"> Ada</span></button>
<button type="button" hidden>Copy</button>
</form>
<table><caption>People</caption><thead><tr><th>E-mail</th><th>Role</th></tr></thead>
<tbody><tr><td>a@x <span>(you)</span></td><td>owner</td></tr></tbody></table>
<dl><dt>Status</dt><dd>Enabled</dd></dl><pre>  two  spaces</pre>
<svg role="img" aria-labelledby="c"><title id="c">Likes per day</title></svg>
</main></body></html>`;

describe("screenOf", () => {
  const screen = screenOf(PAGE);

  test("finds elements by role and accessible name, entities decoded", () => {
    expect(screen.nameOf(screen.getByRole("heading", { level: 1 }))).toBe("Acme & Co");
    expect(screen.getByRole("button", { name: "Remove Ada" })).toBeDefined();
    expect(screen.getByRole("form", { name: "Settings" })).toBeDefined();
    expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
    expect(screen.getByRole("img", { name: "Likes per day" })).toBeDefined();
    expect(screen.namesOf("link")).toEqual(["Overview", "Keys", "Name: is required"]);
    expect(attributeOf(screen.getByRole("link", { name: "Overview" }), "aria-current")).toBe("page");
  });

  test("fails when the element is missing or not alone, naming what there is", () => {
    expect(() => screen.getByRole("button", { name: "Delete" })).toThrow(/"Sign out","Remove Ada"/);
    expect(() => screen.getByRole("link")).toThrow(/found 3/);
    expect(screen.queryByRole("button", { name: "Delete" })).toBeNull();
  });

  test("leaves hidden content out unless asked", () => {
    expect(screen.queryByRole("button", { name: "Copy" })).toBeNull();
    expect(screen.getByRole("button", { name: "Copy", hidden: true })).toBeDefined();
    expect(screen.text()).not.toContain("Copy");
  });

  test("finds controls by label (for, around) and reads their values and descriptions", () => {
    const name = screen.getByLabelText("Name");
    expect(valueOf(name)).toBe("Ada & Bo");
    expect(screen.descriptionOf(name)).toBe("1 to 100 characters. is required");
    expect(valueOf(screen.getByLabelText("Role Owner"))).toBe("o");
    expect(attributeOf(formOf(name)!, "action")).toBe("/save");
    expect(() => screen.getByLabelText("Nickname")).toThrow(/labels:/);
    const events = screen.within(screen.getByRole("group", { name: "Events" }));
    expect(events.namesOf("checkbox", { checked: true })).toEqual(["post.published"]);
    expect(events.namesOf("checkbox", { checked: false })).toEqual(["post.failed"]);
  });

  test("reads tables, description lists and preformatted text as shown", () => {
    const people = screen.getByRole("table", { name: "People" });
    expect(screen.rowsOf(people)).toEqual([
      ["E-mail", "Role"],
      ["a@x (you)", "owner"],
    ]);
    expect(screen.recordsOf(people)).toEqual([{ "E-mail": "a@x (you)", Role: "owner" }]);
    expect(screen.definitions()).toEqual({ Status: "Enabled" });
    expect(screen.preformatted()).toEqual(["  two  spaces"]);
  });
});
