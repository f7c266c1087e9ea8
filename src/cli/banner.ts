import type { Herald } from "../herald.ts";
import { HERALD_VERSION } from "../herald.ts";
import { hasAnyAccount } from "../modules/account/repo.ts";
import { issueSetupToken, setupUrl, signupSetting } from "../modules/installation/service.ts";
import { emailConfirmationRequired } from "../modules/signup/confirmation.ts";

/** How the banner names commands: what the user runs, and the data dir when it was set. */
export interface CommandHints {
  /** `npm run herald --`, or the compiled binary's path. */
  self: string;
  /** `HERALD_DATA_DIR="…" ` when the variable is set (so pasted commands reach the same data), else "". */
  dataDirEnv: string;
}

/**
 * What `herald serve` prints once it listens: where it is, whether mail is sent and addresses need
 * confirming, who may sign up, and where to click next. On an installation without any account it
 * makes a new one-time setup link (the hash is stored; an earlier link stops working) and shows it
 * first of all, with the command-line path beside it.
 */
export async function serveBanner(h: Herald, hints: CommandHints): Promise<string> {
  const base = h.config.baseUrl;
  const lines = [
    `Herald ${HERALD_VERSION} listening on ${base} (data ${h.config.databaseUrl ? "PostgreSQL" : h.config.dataDir})`,
    `  API     ${base}/v1 (docs ${base}/v1/docs)`,
    `  Mail    ${mailLine(h)}`,
  ];
  const signup = await signupSetting(h);
  const who = signup.policy === "open" ? "anyone may sign up" : "only invited people may join";
  const decided = signup.source === "environment" ? ` (HERALD_SIGNUP=${signup.policy})` : "";
  const token = (await hasAnyAccount(h.db)) ? null : await issueSetupToken(h);
  if (token === null) {
    lines.push(`  Signup  ${who}${decided}`, `  Next    sign in at ${base}/login`);
    return lines.join("\n");
  }
  const command = `${hints.dataDirEnv}${hints.self} admin`;
  return [
    ...lines,
    "",
    "No account exists yet. Open this one-time link in a browser to set Herald up:",
    "",
    `    ${setupUrl(h, token)}`,
    "",
    `Or from the command line: ${command} bootstrap --email you@example.com --workspace-name "My workspace"`,
    `(A new link: ${command} setup-link; it replaces this one.)`,
    "",
  ].join("\n");
}

/** Whether mail is sent, and what that means for new accounts' addresses. */
function mailLine(h: Herald): string {
  const confirm = emailConfirmationRequired(h);
  if (h.mail)
    return confirm
      ? "sent through HERALD_SMTP_URL; new accounts confirm their address by e-mail"
      : "sent through HERALD_SMTP_URL; new accounts need no address confirmation";
  return confirm
    ? "not configured (HERALD_SMTP_URL is not set): e-mails wait in the outbox, and new accounts wait " +
        "until their address is confirmed"
    : "not configured (HERALD_SMTP_URL is not set): nothing is e-mailed, and new accounts need no " +
        "address confirmation";
}
