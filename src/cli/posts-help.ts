// The help texts of `herald posts …`, one per command.

/** `herald posts --help`. */
export const POSTS_HELP = `Usage: herald posts <command> [options]

Commands:
  create       Publish, schedule, queue or draft a post (a thread: one argument per item)
  list         List posts (views and filters)
  get ID       Show one post: state, times, text, links, last error
  cancel ID    Cancel a post that has not gone out
  retry ID     Send a failed, missed or needs-attention post again
  reschedule ID TIME   Move a post to another time
  validate     Check a create request without storing anything
  import FILE  Import posts from a CSV file (a table of rows; --dry-run stores nothing)

Every command takes --workspace ws_… (default: HERALD_WORKSPACE_ID, else the login's workspace,
else the key's only one) and --json (the API's objects). herald posts <command> --help for more.`;

/** `herald posts create --help`. */
export const CREATE_HELP = `Usage: herald posts create [TEXT…] [options]

The post's text: one argument per thread item (later items are replies on X, Bluesky, Mastodon and
Threads), or --file FILE, or - (or --file -) to read standard input. In a file, a line of three
dashes (---) separates the items.

Options:
  --when now|draft|queue|TIME   publish now (default), save a draft, take the queue's next window, or
                                schedule at TIME: ISO 8601 with a UTC offset (2026-03-02T09:00:00+01:00),
                                or a local time (2026-03-02T09:00) read in --time-zone
  --channel C          post to the workspace's default destination of channel C, or its only one
                       (bluesky, mastodon, x, …); repeat for several channels
  --destination D      post to destination D (dest_…); repeat for several
                       (neither: the workspace's only destination)
  --media FILE|ast_…   attach a media file (uploaded first, with a progress bar) or an existing asset;
                       repeat for several
  --first-comment TEXT a comment Herald posts under the post right after it is published
                       (Facebook, Instagram, LinkedIn and YouTube; see docs/posts.md)
  --group G            the post group (default: a new cli-… value; printed)
  --time-zone ZONE     IANA zone for now or TIME (default: the workspace's); a local TIME is read in
                       it (a time the clocks skip is refused, one they pass twice is the first)
  --recycle-every DAYS  with --recycle-count N: publish N copies of the post later, each DAYS
  --recycle-count N     (1-365) after the publication before (1-52 copies; not on X, TikTok or
                        YouTube); a draft recycles once published
  --recycle-variation TEXT  a copy's text (repeat: the copies take them in turn; none: the post's)
  --yes, -y            confirm publishing or scheduling without asking (needed without a terminal)
  --no-link-tracking   publish URLs as written, even when the workspace tracks links
  --workspace ws_…     workspace
  --json               print the API's post_set

Publishing and scheduling are consequential: without --yes, herald asks at the terminal and sends
"confirmed": true only once you answer y. Drafts need no confirmation.`;

/** `herald posts list --help`. */
export const LIST_HELP = `Usage: herald posts list [options]

Lists posts, newest first: id, group, channel, state, scheduled, published, text.

Options:
  --view all|drafts|scheduled|published|attention|failed   (default all)
  --state S, --channel C, --group G, --destination D       filters
  --limit N, --after CURSOR, --all                         page size (1-100, default 25), next page, every page
  --workspace ws_…, --json`;

/** `herald posts get --help`. */
export const GET_HELP = `Usage: herald posts get ID [--attempts] [--workspace ws_…] [--json]

Shows one post: state, destination, times, text items, published links, its tracked short links
with their clicks, and the last error. --attempts adds its publishing attempts.`;

/** `herald posts cancel --help`. */
export const CANCEL_HELP = `Usage: herald posts cancel ID [--yes] [--workspace ws_…] [--json]

Cancels a post that has not gone out (draft, scheduled, queued, ready). Asks first unless --yes.`;

/** `herald posts retry --help`. */
export const RETRY_HELP = `Usage: herald posts retry ID [--yes] [--acknowledge-duplicate-risk] [--workspace ws_…] [--json]

Sends a failed, missed or needs-attention post again. When its last attempt's outcome is unknown the
post may already be on the network: check there, then pass --acknowledge-duplicate-risk. Asks first
unless --yes.`;

/** `herald posts reschedule --help`. */
export const RESCHEDULE_HELP = `Usage: herald posts reschedule ID TIME [--time-zone ZONE] [--yes] [--acknowledge-duplicate-risk]
                               [--workspace ws_…] [--json]

Moves a post to TIME: ISO 8601 with a UTC offset, or a local time (2026-03-02T09:00) read in
--time-zone ZONE. Asks first unless --yes.`;

/** `herald posts validate --help`. */
export const VALIDATE_HELP = `Usage: herald posts validate [TEXT…] [options]

Checks what herald posts create would send, against the destinations' rules, without storing
anything. Takes create's options (--media takes asset ids only: nothing is uploaded). Prints "valid",
or each problem (pointer, channel, code, detail) and exits 1. With --when draft the draft is valid
as it is; what publishing it would refuse is listed as warnings (exit 0).`;

/** `herald posts import --help`. */
export const IMPORT_HELP = `Usage: herald posts import FILE [--dry-run] [--yes] [--workspace ws_…] [--json]

Imports the posts of a CSV file (FILE, or - for standard input): one post per row, row 1 naming the
columns group, when, time_zone, channel, destination_id, body, media, first_comment (see
docs/posts.md, "Importing from CSV"). Every row is checked first and printed as a table (row number
as a spreadsheet shows it, valid, errors by column, post ids); nothing is stored unless every row is
valid. Then herald asks before storing all rows at once (--yes answers for you; without a terminal
--yes is required). Running the same file again replays the first import instead of importing twice.

Options:
  --dry-run            check every row and store nothing
  --yes, -y            store without asking
  --workspace ws_…     workspace
  --json               print the API's post_import

Exit code 0 when every row is valid (and stored, without --dry-run), 1 otherwise.`;

/** Each command's help by its name. */
export const HELPS: Record<string, string> = {
  create: CREATE_HELP,
  list: LIST_HELP,
  get: GET_HELP,
  cancel: CANCEL_HELP,
  retry: RETRY_HELP,
  reschedule: RESCHEDULE_HELP,
  validate: VALIDATE_HELP,
  import: IMPORT_HELP,
};

/** The help of one posts command, or the overview. */
export function postsHelp(command?: string): string {
  return (command && HELPS[command]) || POSTS_HELP;
}
