import { expect } from "bun:test";
import { attributeOf, Screen, screenOf } from "./screen.ts";
import type { TestServer } from "./server.ts";

/** What a page request returned. */
export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header of a redirect. */
  location: string | null;
  /** Each Set-Cookie line. */
  setCookies: string[];
}

/**
 * A minimal browser for the pages: a cookie jar (it sends back what the server set, drops what it
 * cleared), no redirects followed (tests look at them), forms posted urlencoded like a browser does.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();
  /** Headers sent with every request (e.g. the `x-forwarded-for` a trusted proxy would add). */
  readonly headers: Record<string, string> = {};

  constructor(private readonly s: Pick<TestServer, "url">) {}

  /** Sends a request with the jar's cookies and keeps the cookies the answer sets. */
  async send(
    method: string,
    path: string,
    form?: Record<string, string> | [string, string][] | FormData,
  ): Promise<PageResponse> {
    const headers: Record<string, string> = { ...this.headers };
    const jar = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    if (jar) headers.cookie = jar;
    let body: string | FormData | undefined;
    // Pairs let a name repeat (checkboxes); FormData goes multipart, as a file form does.
    if (form instanceof FormData) body = form;
    else if (form) {
      body = new URLSearchParams(form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const response = await fetch(this.s.url + path, { method, headers, body, redirect: "manual" });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /;\s*Max-Age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get("location"),
      setCookies,
    };
  }

  get(path: string): Promise<PageResponse> {
    return this.send("GET", path);
  }

  post(path: string, form: Record<string, string>): Promise<PageResponse> {
    return this.send("POST", path, form);
  }

  /**
   * Opens a page, then posts its form (the last one posting to `action`, default the page's main form)
   * as a browser would: its hidden fields (the CSRF token among them) and `fields`.
   */
  async submit(page: string, fields: Record<string, string>, action?: string): Promise<PageResponse> {
    const opened = await this.get(page);
    expect({ page, status: opened.status }).toEqual({ page, status: 200 });
    const target = action ?? formAction(opened.text);
    return this.post(target, { ...hiddenFields(opened.text, target), ...fields });
  }

  /** Signs in through /login (expects the redirect that follows success). */
  async signIn(email: string, password: string): Promise<PageResponse> {
    const r = await this.submit("/login", { email, password }, "/login");
    expect({ status: r.status, location: r.location }).toMatchObject({ status: 303 });
    return r;
  }
}

/** The CSRF token of the first form on a page that has one. */
export function csrfTokenOf(html: string): string {
  const input = screenOf(html)
    .elements("input")
    .find((i) => attributeOf(i, "name") === "csrf_token");
  const token = input && attributeOf(input, "value");
  expect(token).toBeDefined();
  return token!;
}

/** The POST forms of a page, in order. */
const postForms = (html: string) =>
  screenOf(html)
    .elements("form")
    .filter((form) => attributeOf(form, "method") === "post");

/** The action of the page's main form (the last form, after the header's sign-out form). */
export function formAction(html: string): string {
  const actions = postForms(html).map((form) => attributeOf(form, "action")!);
  expect(actions.length).toBeGreaterThan(0);
  return actions.at(-1)!;
}

/** The path and query of an absolute URL the API returned (signup_url, verification_uri_complete). */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** The hidden inputs of the last form on the page that posts to `action`. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const forms = postForms(html).filter((form) => attributeOf(form, "action") === action);
  expect(forms.length).toBeGreaterThan(0);
  const fields: Record<string, string> = {};
  for (const input of new Screen([forms.at(-1)!]).elements("input"))
    if (attributeOf(input, "type") === "hidden")
      fields[attributeOf(input, "name")!] = attributeOf(input, "value") ?? "";
  return fields;
}
