import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { docsUrl, type Herald } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { hasAnyAccount } from "../../modules/account/repo.ts";
import {
  completeSetup,
  inspectSetupToken,
  type SetupErrors,
  type SetupForm,
  signupIsOpen,
  signupSetting,
} from "../../modules/installation/service.ts";
import { signupStartLimiter } from "../../modules/signup/limiter.ts";
import { createSignupIntent, PASSWORD_MIN_LENGTH } from "../../modules/signup/service.ts";
import { closeSession } from "../../modules/sessions/service.ts";
import { html } from "../pages/html.ts";
import {
  type Browser,
  browserOf,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  redirect,
} from "../pages/respond.ts";
import { setupPage } from "../pages/setup.ts";
import { signupStartPage } from "../pages/signup.ts";
import { requestIdOf, type ClientAddress } from "../plugin.ts";
import {
  addressConfirmation,
  csrfRefused,
  formPost,
  hidden,
  pageMessage,
  sessionCookie,
  tooManyAttempts,
} from "./page-kit.ts";
import { SignupIntentBody } from "./signup-schemas.ts";

/** What the front door's handlers share. */
interface FrontDoor {
  h: Herald;
  clientAddress: ClientAddress;
}
type PageRequest = { request: Request };
type PageQuery = PageRequest & { query: Record<string, string | undefined> };

/**
 * The way in from a browser (issue 26, "The front door"): `/` by kind of client, the first-run
 * `/setup` with the one-time token `herald serve` prints, and `/signup`, the browser's form in front
 * of POST /v1/signup-intents.
 */
export function frontDoorRoutes(h: Herald, clientAddress: ClientAddress) {
  const door: FrontDoor = { h, clientAddress };
  return new Elysia()
    .get("/", (c) => showRoot(door, c), hidden)
    .get("/setup", (c) => showSetup(door, c), hidden)
    .post("/setup", (c) => submitSetup(door, c), formPost)
    .get("/signup", (c) => showSignupStart(door, c), hidden)
    .post("/signup", (c) => submitSignupStart(door, c), formPost);
}

/** Whether a request's Accept header asks for HTML (what a browser's navigation sends). */
export function acceptsHtml(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return accept.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    if (type !== "text/html") return false;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * `GET /`: a browser goes on (303) to its dashboard when signed in, to `/setup` while the installation
 * has no account, else to `/login`; any other client learns what this server is, as JSON.
 */
async function showRoot({ h }: FrontDoor, { request }: PageRequest) {
  if (!acceptsHtml(request))
    return new Response(
      JSON.stringify({
        object: "service",
        name: "herald",
        version: h.version,
        api_base: `${h.config.baseUrl}/v1`,
        docs_url: docsUrl(h),
      }),
      { headers: { "content-type": "application/json", "cache-control": "no-store", vary: "accept" } },
    );
  const browser = await browserOf(h, request);
  const to = browser.session ? "/dashboard" : (await hasAnyAccount(h.db)) ? "/login" : "/setup";
  return pageResponse(h, browser, null, {
    status: 303,
    headers: { location: to, vary: "accept, cookie" },
  });
}

async function showSetup(door: FrontDoor, { request, query }: PageQuery) {
  const { h } = door;
  const browser = await browserOf(h, request);
  const token = typeof query.token === "string" ? query.token : "";
  if (token === "") {
    if (await hasAnyAccount(h.db)) return alreadySetUp(door, browser);
    return pageMessage(h, browser, 200, "Open the setup link", [
      html`Herald is not set up yet. Setting it up needs the one-time link that <code>herald serve</code>
printed when it started (<code>…/setup?token=…</code>): open that link.`,
      html`Lost it? On the server, <code>herald admin setup-link</code> prints a new one (the earlier link
then stops working).`,
    ]);
  }
  const state = await inspectSetupToken(h, token);
  if (state === "done") return alreadySetUp(door, browser);
  if (state === "invalid") return setupLinkInvalid(door, browser);
  return setupForm(
    door,
    browser,
    token,
    { email: "", name: "", workspace_name: "", signup: "closed" },
    {},
    200,
  );
}

async function submitSetup(door: FrontDoor, { request }: PageRequest) {
  const { h } = door;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(h, browser);
  const token = form.get("token") ?? "";
  const fields: SetupForm = {
    email: form.get("email") ?? "",
    name: form.get("name") ?? "",
    workspace_name: form.get("workspace_name") ?? "",
    password: form.get("password") ?? "",
    password_confirmation: form.get("password_confirmation") ?? "",
    signup: form.get("signup") ?? "",
  };
  const outcome = await completeSetup(h, { token, form: fields, requestId: requestIdOf(request) });
  switch (outcome.kind) {
    case "already_set_up":
      return alreadySetUp(door, browser);
    case "invalid_link":
      return setupLinkInvalid(door, browser);
    case "invalid":
      return setupForm(door, browser, token, fields, outcome.errors, 400);
    case "done":
      if (browser.session) await closeSession(h, browser.session.id);
      return redirect(h, browser, "/dashboard?welcome=setup", [sessionCookie(h, outcome.session.token)]);
  }
}

async function setupForm(
  { h }: FrontDoor,
  browser: Browser,
  token: string,
  values: { email: string; name: string; workspace_name: string; signup: string },
  errors: SetupErrors,
  status: number,
): Promise<Response> {
  const setting = await signupSetting(h);
  const page = setupPage({
    csrf: csrfOf(h, browser),
    token,
    values,
    signupFromEnvironment: setting.source === "environment" ? setting.policy : null,
    passwordMin: PASSWORD_MIN_LENGTH,
    errors,
  });
  return pageResponse(h, browser, page, { status });
}

/** 410: the installation has an account; /setup never makes a second owner. */
function alreadySetUp({ h }: FrontDoor, browser: Browser): Response {
  return pageMessage(h, browser, 410, "Herald is already set up", [
    "This server has its first account, so the setup page is closed.",
    html`<a href="/login">Sign in</a>${browser.session ? html` or go to <a href="/dashboard">your dashboard</a>` : ""}.`,
  ]);
}

function setupLinkInvalid({ h }: FrontDoor, browser: Browser): Response {
  return pageMessage(h, browser, 404, "This setup link is not valid", [
    "Check that the whole link was copied. Only the newest link works: each start of herald serve on an " +
      "empty installation, and each herald admin setup-link, makes a new one.",
    html`On the server, <code>herald admin setup-link</code> prints a new link.`,
  ]);
}

/** While signup is closed: a page that says so (invitations still work). */
function signupClosed({ h }: FrontDoor, browser: Browser): Response {
  return pageMessage(h, browser, 403, "Signup is closed", [
    "This server takes new people by invitation only: ask someone who uses it to invite you, and open " +
      "the link of the invitation e-mail.",
    html`Already have an account? <a href="/login">Sign in</a>.`,
  ]);
}

async function showSignupStart(door: FrontDoor, { request }: PageRequest) {
  const { h } = door;
  const browser = await browserOf(h, request);
  if (!(await signupIsOpen(h))) return signupClosed(door, browser);
  return signupStartForm(door, browser, { email: "", workspace_name: "" }, {}, 200);
}

async function submitSignupStart(door: FrontDoor, { request }: PageRequest) {
  const { h } = door;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(h, browser);
  if (!(await signupIsOpen(h))) return signupClosed(door, browser);
  try {
    signupStartLimiter(h).hit(door.clientAddress(request), h.clock.now());
  } catch (error) {
    return tooManyAttempts(h, browser, error);
  }
  const values = {
    email: (form.get("email") ?? "").trim(),
    workspace_name: form.get("workspace_name") ?? "",
  };
  // The API's own schema decides what it accepts; the page words each refusal for a person.
  const errors: Partial<Record<"email" | "workspace_name", string>> = {};
  for (const issue of Value.Errors(SignupIntentBody, values)) {
    if (issue.path === "/email") errors.email = "Enter an e-mail address like name@example.com.";
    if (issue.path === "/workspace_name") errors.workspace_name = "Enter a name of 1 to 200 characters.";
  }
  if (Object.keys(errors).length > 0) return signupStartForm(door, browser, values, errors, 400);
  try {
    const created = await createSignupIntent(h, values);
    // The intent's signup_url, as a path: the page that asks for a name and a password.
    return redirect(h, browser, `/signup/${created.token}`);
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    if (error.code === "public_signup_closed") return signupClosed(door, browser);
    const pointer = error.errors?.[0]?.pointer;
    if (error.code === "public_conflict" && pointer === "/email") {
      const taken = { email: "This address already has an account." };
      return signupStartForm(door, browser, values, taken, 409, true);
    }
    if (pointer === "/email" || pointer === "/workspace_name") {
      const detail = error.errors?.[0]?.detail ?? error.message;
      return signupStartForm(door, browser, values, { [pointer.slice(1)]: `It ${detail}.` }, 400);
    }
    throw error;
  }
}

function signupStartForm(
  { h }: FrontDoor,
  browser: Browser,
  values: { email: string; workspace_name: string },
  errors: Partial<Record<"email" | "workspace_name", string>>,
  status: number,
  emailTaken = false,
): Response {
  const page = signupStartPage({
    csrf: csrfOf(h, browser),
    values,
    errors,
    emailTaken,
    confirmEmail: addressConfirmation(h),
  });
  return pageResponse(h, browser, page, { status });
}
