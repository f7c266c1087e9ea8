import { Elysia } from "elysia";
import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import { requestIdOf, type ClientAddress } from "../plugin.ts";
import { FailedAuthLimiter } from "../rate-limit.ts";
import { formatUserCode, normalizeUserCode } from "../../modules/cli-auth/codes.ts";
import { listAccountWorkspacesOldestFirst } from "../../modules/cli-auth/repo.ts";
import {
  CLI_KEY_SCOPES,
  decideCliAuthorization,
  findAuthorizationForCode,
} from "../../modules/cli-auth/service.ts";
import {
  confirmEmail,
  inspectConfirmation,
  userAwaitsConfirmation,
} from "../../modules/signup/confirmation.ts";
import { completeSignup, inspectSignupLink, PASSWORD_MIN_LENGTH } from "../../modules/signup/service.ts";
import { closeSession, signIn } from "../../modules/sessions/service.ts";
import { confirmEmailPage } from "../pages/account.ts";
import { deviceCodePage, deviceConfirmPage } from "../pages/device.ts";
import { html } from "../pages/html.ts";
import { PAGE_CSS_PATH } from "../pages/layout.ts";
import { loginPage, logoutPage } from "../pages/login.ts";
import {
  type Browser,
  browserOf,
  cookie,
  csrfOf,
  formFromThisBrowser,
  localPath,
  pageResponse,
  readForm,
  redirect,
  SESSION_COOKIE,
  stylesheetResponse,
} from "../pages/respond.ts";
import { PasswordAttempts } from "../pages/password-attempts.ts";
import { signupPage } from "../pages/signup.ts";
import { PAGE_CSS } from "../pages/style.ts";
import {
  addressConfirmation,
  csrfRefused,
  formPost,
  hidden,
  newPersonFields,
  pageFrame,
  pageMessage,
  sessionCookie,
  tooManyAttempts,
} from "./page-kit.ts";
import { frontDoorRoutes } from "./front-door.ts";
import { signupIsOpen } from "../../modules/installation/service.ts";

/** What every page handler shares: Herald, the peer address, and the failure limiters. */
interface Pages {
  h: Herald;
  clientAddress: ClientAddress;
  /** Wrong passwords per client address, per account, and per browser that signed in before. */
  passwords: PasswordAttempts;
  /** Wrong device codes per session. */
  codeFailures: FailedAuthLimiter;
}
type PageRequest = { request: Request };
type PageQuery = PageRequest & { query: Record<string, string | undefined> };
type TokenPage = PageRequest & { params: { token: string } };

/**
 * The hosted pages of the browser handoff: /login, /logout, /signup/{token}, /device,
 * /confirm-email/{token} and the signed-in /dashboard. Server-rendered, no scripts, every form a POST
 * with a CSRF token; the session cookie is HttpOnly, SameSite=Lax, Secure on an https base URL.
 */
export function pageRoutes(h: Herald, clientAddress: ClientAddress) {
  // Wrong passwords per client address and wrong codes per session, like failed API keys.
  const p: Pages = {
    h,
    clientAddress,
    passwords: new PasswordAttempts(h),
    codeFailures: new FailedAuthLimiter(h.config.authFailuresPerMinute),
  };
  return new Elysia()
    .get(PAGE_CSS_PATH, () => stylesheetResponse(PAGE_CSS), hidden)
    .use(frontDoorRoutes(h, clientAddress))
    .get("/login", (c) => showLogin(p, c), hidden)
    .post("/login", (c) => submitLogin(p, c), formPost)
    .get("/logout", (c) => showLogout(p, c), hidden)
    .post("/logout", (c) => submitLogout(p, c), formPost)
    .get("/signup/:token", (c) => showSignup(p, c), hidden)
    .post("/signup/:token", (c) => submitSignup(p, c), formPost)
    .get("/device", (c) => showDevice(p, c), hidden)
    .post("/device", (c) => submitDevice(p, c), formPost)
    .get("/confirm-email/:token", (c) => showConfirmEmail(p, c), hidden)
    .post("/confirm-email/:token", (c) => submitConfirmEmail(p, c), formPost);
}

async function showLogin({ h }: Pages, { request, query }: PageQuery) {
  const browser = await browserOf(h, request);
  const next = localPath(query.next ?? null);
  if (browser.session) return redirect(h, browser, next ?? "/dashboard");
  const page = loginPage({
    csrf: csrfOf(h, browser),
    next,
    signedOut: query.signed_out === "1",
    signupOpen: await signupIsOpen(h),
  });
  return pageResponse(h, browser, page);
}

async function submitLogin(p: Pages, { request }: PageRequest) {
  const { h, passwords } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(p.h, browser);
  const email = form.get("email") ?? "";
  const attempt = passwords.attemptOf(request, email, p.clientAddress(request));
  try {
    passwords.check(attempt, h.clock.now());
  } catch (error) {
    return tooManyAttempts(h, browser, error);
  }
  const next = localPath(form.get("next"));
  const opened = await signIn(h, { email, password: form.get("password") ?? "" });
  if (!opened) {
    passwords.fail(attempt, h.clock.now());
    const page = loginPage({
      csrf: csrfOf(h, browser),
      email,
      next,
      failed: true,
      signupOpen: await signupIsOpen(h),
    });
    return pageResponse(h, browser, page, { status: 400 });
  }
  // A browser signs in as one person at a time: an earlier session ends here.
  if (browser.session) await closeSession(h, browser.session.id);
  const cookies = [sessionCookie(h, opened.token), passwords.knownBrowserCookie(attempt)];
  return redirect(h, browser, next ?? "/dashboard", cookies);
}

async function showLogout({ h }: Pages, { request }: PageRequest) {
  const browser = await browserOf(h, request);
  if (!browser.session) return redirect(h, browser, "/login");
  return pageResponse(h, browser, logoutPage({ csrf: csrfOf(h, browser), email: browser.session.email }));
}

async function submitLogout(p: Pages, { request }: PageRequest) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!browser.session) return redirect(h, browser, "/login");
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(p.h, browser);
  await closeSession(h, browser.session.id);
  return redirect(h, browser, "/login?signed_out=1", [cookie(h, SESSION_COOKIE, "", 0)]);
}

async function showSignup(p: Pages, { request, params }: TokenPage) {
  const browser = await browserOf(p.h, request);
  return signupForm(p, browser, params.token, "", {}, 200);
}

async function submitSignup(p: Pages, { request, params }: TokenPage) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(p.h, browser);
  const fields = newPersonFields(form);
  const outcome = await completeSignup(h, {
    token: params.token,
    form: fields,
    requestId: requestIdOf(request),
  });
  switch (outcome.kind) {
    case "unknown":
    case "expired":
    case "used":
      return signupLinkGone(p, browser, outcome.kind);
    case "email_taken":
      return pageMessage(p.h, browser, 409, "This address already has an account", [
        html`<a href="/login">Sign in</a> instead.`,
      ]);
    case "invalid": {
      return signupForm(p, browser, params.token, fields.name, outcome.errors, 400);
    }
    case "done": {
      if (browser.session) await closeSession(h, browser.session.id);
      const welcome = outcome.cliApproved ? "cli" : "account";
      return redirect(h, browser, `/dashboard?welcome=${welcome}`, [sessionCookie(h, outcome.session.token)]);
    }
  }
}

async function showDevice(p: Pages, { request, query }: PageQuery) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const code = typeof query.user_code === "string" ? query.user_code : null;
  if (!browser.session)
    return toLogin(p, browser, code ? `/device?user_code=${encodeURIComponent(code)}` : "/device");
  if (code) return deviceAnswer(p, browser, code);
  const page = deviceCodePage(pageFrame(p.h, browser, "Sign in the command line"), {
    csrf: csrfOf(h, browser),
  });
  return pageResponse(h, browser, page);
}

async function submitDevice(p: Pages, { request }: PageRequest) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  const code = form.get("user_code") ?? "";
  if (!browser.session) return toLogin(p, browser, "/device");
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(p.h, browser);
  const decision = form.get("decision");
  if (decision !== "approve" && decision !== "deny") return deviceAnswer(p, browser, code);
  const session = browser.session;
  const decided = await decideCliAuthorization(h, {
    userCode: code,
    decision,
    decider: {
      sessionId: session.id,
      userId: session.userId,
      accountId: session.accountId,
      requestId: requestIdOf(request),
    },
    workspaceId: form.get("workspace_id"),
  });
  switch (decided.result) {
    case "unknown":
      return deviceAnswer(p, browser, code);
    case "already_decided":
      return decidedAlready(p, browser, decided.row!.status);
    case "denied":
      return pageMessage(p.h, browser, 200, "Request denied", [
        html`The command line on <strong>${decided.row!.deviceName}</strong> gets no access; your terminal says so.`,
      ]);
    case "approved": {
      const awaiting = await userAwaitsConfirmation(h.db, session.userId);
      return pageMessage(p.h, browser, 200, "Command line approved", [
        html`Return to your terminal: <code>herald login</code> on <strong>${decided.row!.deviceName}</strong>
finishes by itself${awaiting ? html` once ${session.email} is confirmed${confirmedHow(h)}` : ""}.`,
      ]);
    }
  }
}

async function showConfirmEmail(p: Pages, { request, params }: TokenPage) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const found = await inspectConfirmation(h, params.token);
  if (found.state !== "waiting") return confirmationOutcome(p, browser, found.state);
  const page = confirmEmailPage(pageFrame(p.h, browser, "Confirm your address"), {
    csrf: csrfOf(h, browser),
    action: `/confirm-email/${params.token}`,
    email: found.email,
  });
  return pageResponse(h, browser, page);
}

async function submitConfirmEmail(p: Pages, { request, params }: TokenPage) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(p.h, browser);
  const before = await confirmEmail(h, params.token);
  if (before.state !== "waiting") return confirmationOutcome(p, browser, before.state);
  return pageMessage(p.h, browser, 200, "Address confirmed", [
    html`Thank you: <strong>${before.email}</strong> is confirmed. A terminal waiting in
<code>herald login</code> receives its key at its next poll.`,
    html`<a href="/dashboard">Go to your account</a>`,
  ]);
}

/** How an address gets confirmed: by the e-mailed link, or by the operator when no mail is sent. */
function confirmedHow(h: Herald): string {
  return h.mail
    ? " with the link we e-mailed you"
    : " by the server's operator (this server sends no e-mail)";
}

function toLogin({ h }: Pages, browser: Browser, next: string) {
  return redirect(h, browser, `/login?next=${encodeURIComponent(next)}`);
}

/** The approval question for a code, or what became of its authorization. */
async function deviceAnswer(p: Pages, browser: Browser, typed: string) {
  const { h, codeFailures } = p;
  const session = browser.session!;
  try {
    codeFailures.check(session.id, h.clock.now());
  } catch (error) {
    return tooManyAttempts(h, browser, error);
  }
  const row = await findAuthorizationForCode(h, typed);
  if (!row) {
    codeFailures.fail(session.id, h.clock.now());
    const error = "That code is not valid or has expired. Check your terminal, or run herald login again.";
    const page = deviceCodePage(pageFrame(p.h, browser, "Sign in the command line"), {
      csrf: csrfOf(h, browser),
      code: typed,
      error,
    });
    return pageResponse(h, browser, page, { status: 404 });
  }
  if (row.status !== "pending") return decidedAlready(p, browser, row.status);
  const awaiting = (await userAwaitsConfirmation(h.db, session.userId)) ? session.email : null;
  const page = deviceConfirmPage(pageFrame(p.h, browser, "Approve the command line"), {
    csrf: csrfOf(h, browser),
    code: formatUserCode(normalizeUserCode(typed)!),
    deviceName: row.deviceName,
    cliVersion: row.cliVersion,
    requestedAt: iso(row.createdAt),
    expiresAt: iso(row.expiresAt),
    accountName: session.accountName,
    workspaces: await listAccountWorkspacesOldestFirst(h.db, session.accountId),
    scopes: CLI_KEY_SCOPES,
    awaitingConfirmation: awaiting,
    mailSent: h.mail !== null,
  });
  return pageResponse(h, browser, page);
}

function decidedAlready(p: Pages, browser: Browser, status: string) {
  return pageMessage(p.h, browser, 409, "This request was already answered", [
    status === "denied"
      ? "It was denied. Run herald login again to start over."
      : "It was approved already. Return to your terminal.",
  ]);
}

/** The signup form of an open link (with what was typed and its errors), or what became of the link. */
async function signupForm(
  p: Pages,
  browser: Browser,
  token: string,
  name: string,
  errors: Parameters<typeof signupPage>[0]["errors"],
  status: number,
): Promise<Response> {
  const { h } = p;
  const link = await inspectSignupLink(h, token);
  if (link.kind !== "open") return signupLinkGone(p, browser, link.kind);
  const page = signupPage({
    csrf: csrfOf(h, browser),
    action: `/signup/${token}`,
    email: link.intent.email,
    workspaceName: link.intent.workspaceName,
    name,
    cli: link.cli ? { deviceName: link.cli.deviceName, cliVersion: link.cli.cliVersion } : null,
    confirmEmail: addressConfirmation(h),
    passwordMin: PASSWORD_MIN_LENGTH,
    errors,
  });
  return pageResponse(h, browser, page, { status });
}

function signupLinkGone(p: Pages, browser: Browser, kind: "unknown" | "expired" | "used"): Response {
  if (kind === "unknown")
    return pageMessage(p.h, browser, 404, "This signup link is not valid", [
      "Check that the whole link was copied, or start the signup again.",
    ]);
  if (kind === "used")
    return pageMessage(p.h, browser, 410, "This signup link was already used", [
      html`The account exists: <a href="/login">sign in</a>.`,
    ]);
  return pageMessage(p.h, browser, 410, "This signup link has expired", [
    "Signup links work for an hour. Start the signup again (herald login offers it).",
  ]);
}

function confirmationOutcome(
  p: Pages,
  browser: Browser,
  state: "unknown" | "expired" | "confirmed",
): Response {
  if (state === "unknown")
    return pageMessage(p.h, browser, 404, "This confirmation link is not valid", [
      "Check that the whole link was copied from the e-mail.",
    ]);
  if (state === "confirmed")
    return pageMessage(p.h, browser, 200, "Address already confirmed", [
      html`<a href="/dashboard">Go to your account</a>`,
    ]);
  return pageMessage(p.h, browser, 410, "This confirmation link has expired", [
    html`<a href="/dashboard">Sign in</a> and send a new link from your account page.`,
  ]);
}
