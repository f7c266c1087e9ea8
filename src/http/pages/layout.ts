import { html, type Markup } from "./html.ts";

/** Where the pages' stylesheet is served. */
export const PAGE_CSS_PATH = "/pages/herald.css";

/** What every page shows around its content. */
export interface PageFrame {
  title: string;
  /** The signed-in person (the header then offers sign-out with this CSRF token). */
  signedIn?: { email: string; csrf: string } | null;
}

/** A whole HTML document: language, title, the stylesheet, a header and the page's `<main>`. */
export function layout(frame: PageFrame, content: Markup): string {
  const account = frame.signedIn
    ? html`<form method="post" action="/logout">
  <input type="hidden" name="csrf_token" value="${frame.signedIn.csrf}">
  <span class="muted">Signed in as ${frame.signedIn.email}</span>
  <button type="submit" class="link">Sign out</button>
</form>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Herald</title>
<link rel="stylesheet" href="${PAGE_CSS_PATH}">
</head>
<body>
<header><a class="brand" href="/dashboard">Herald</a>${account}</header>
<main id="main">
${content}
</main>
</body>
</html>
`.text;
}

/** The hidden CSRF field every form carries. */
export function csrfField(token: string): Markup {
  return html`<input type="hidden" name="csrf_token" value="${token}">`;
}

/** One input with its label, hint and error, wired together for assistive technology. */
export function field(spec: {
  name: string;
  label: string;
  type?: "text" | "email" | "password";
  value?: string;
  autocomplete?: string;
  hint?: string;
  error?: string;
  required?: boolean;
  minlength?: number;
  maxlength?: number;
  autofocus?: boolean;
  extra?: Markup;
}): Markup {
  const describedBy = [spec.hint ? `${spec.name}-hint` : "", spec.error ? `${spec.name}-error` : ""]
    .filter(Boolean)
    .join(" ");
  return html`<div class="field">
<label for="${spec.name}">${spec.label}</label>
${spec.hint ? html`<p class="hint" id="${spec.name}-hint">${spec.hint}</p>` : ""}
${spec.error ? html`<p class="error" id="${spec.name}-error">${spec.error}</p>` : ""}
<input id="${spec.name}" name="${spec.name}" type="${spec.type ?? "text"}"${
    spec.value !== undefined && spec.type !== "password" ? html` value="${spec.value}"` : ""
  }${spec.autocomplete ? html` autocomplete="${spec.autocomplete}"` : ""}${spec.required ? html` required` : ""}${
    spec.minlength ? html` minlength="${spec.minlength}"` : ""
  }${spec.maxlength ? html` maxlength="${spec.maxlength}"` : ""}${describedBy ? html` aria-describedby="${describedBy}"` : ""}${
    spec.error ? html` aria-invalid="true"` : ""
  }${spec.autofocus ? html` autofocus` : ""}${spec.extra ?? ""}>
</div>`;
}

/** The list of problems at the top of a form that was sent back, each linking to its field. */
export function errorSummary(errors: { field?: string; message: string }[]): Markup | "" {
  if (errors.length === 0) return "";
  return html`<div class="errors" role="alert" aria-labelledby="errors-title">
<h2 id="errors-title">There is a problem</h2>
<ul>${errors.map((e) => (e.field ? html`<li><a href="#${e.field}">${e.message}</a></li>` : html`<li>${e.message}</li>`))}</ul>
</div>`;
}

/** A page that only says something (errors, outcomes). */
export function messagePage(
  frame: PageFrame,
  message: { heading: string; paragraphs: (string | Markup)[] },
): string {
  return layout(
    frame,
    html`<h1>${message.heading}</h1>
${message.paragraphs.map((p) => html`<p>${p}</p>`)}`,
  );
}

/** The name of a new account's first workspace (signup, setup). */
export function firstWorkspaceField(value: string, error?: string): Markup {
  return field({
    name: "workspace_name",
    label: "First workspace",
    hint: "Posts, destinations and schedules live in a workspace; you can add more later.",
    value,
    required: true,
    maxlength: 200,
    error,
  });
}

/** A new password and its confirmation (signup, setup, accepting an invitation, a reset link). */
export function newPasswordFields(
  passwordMin: number,
  errors: { password?: string; password_confirmation?: string },
): Markup {
  return html`${field({
    name: "password",
    label: "Password",
    type: "password",
    hint: `At least ${passwordMin} characters, and hard to guess: a few unrelated words work well.`,
    autocomplete: "new-password",
    required: true,
    minlength: passwordMin,
    error: errors.password,
  })}
${field({
  name: "password_confirmation",
  label: "Password again",
  type: "password",
  autocomplete: "new-password",
  required: true,
  error: errors.password_confirmation,
})}`;
}
