import { roleAllows } from "../../modules/account/roles.ts";
import { LOCAL_DATE_TIME, localTimeInZone } from "../../lib/local-time.ts";
import { defaultDestinationIds } from "../../modules/destinations/default.ts";
import { readForm } from "../pages/respond.ts";
import { composeContent, formFields, type ComposeView, type LibraryAsset } from "./compose-form.ts";
import {
  createBody,
  emptyState,
  formErrors,
  readState,
  type ComposeDestination,
  type ComposeState,
} from "./compose-read.ts";
import type { FieldErrors } from "./api.ts";
import type { Asset, Destination, Listing, PostSet, PostValidation } from "./api-resources.ts";
import { composeOptions } from "./compose-networks.ts";
import { readMultipartForm, type ReceivedForm } from "./multipart.ts";
import { actOnReceivedForm } from "./received-form.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { DASHBOARD_UPLOAD_MAX_BYTES, storeAsset, tooLargeText, uploadRoutes } from "./uploads.ts";
import { withNotice } from "./notices.ts";
import { composePane, itemCounters, type PaneInput } from "./compose-pane.ts";
import { nextQueueSlotText, nowInZone } from "./compose-slots.ts";
import { thumbnailRoute } from "./compose-thumbnails.ts";
import { html, type Markup } from "../pages/html.ts";
import { renderPreview, type PreviewMedia } from "../previews/index.ts";

/** `/dashboard/workspaces/:workspace_id/posts/new`: compose a thread, attach media, choose when. */
export function composePages(routes: DashboardRoutes): void {
  const path = "/dashboard/workspaces/:workspace_id/posts/new";
  routes
    .page(path, async (r) => {
      if (!mayCompose(r)) return cannotCompose(r);
      const lists = await loadLists(r);
      const at = r.query.get("at") ?? "";
      const state = emptyState(lists.destinations, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(at) ? at : "");
      return show(r, lists, state, { errors: new Map(), problems: [], status: null }, 200);
    })
    // The pane again, for the form as typed so far (the script posts it as the person types).
    .form(`${path}/preview`, paneFragment)
    .multipart(path, async (r) => {
      if (!mayCompose(r)) return cannotCompose(r);
      return actOnReceivedForm(r, readComposeForm, [tooLargeText()], act);
    });
  uploadRoutes(routes);
  thumbnailRoute(routes);
}

/**
 * The post as the network's preview draws it (src/http/previews): the destination's name, each item's
 * text and media, images by their dashboard thumbnails with the alt text typed, videos as a poster.
 */
function previewOf(r: DashboardRequest, lists: Lists, state: ComposeState, d: ComposeDestination) {
  const media = (id: string): PreviewMedia => {
    const asset = lists.library.find((a) => a.id === id);
    const type = asset?.contentType ?? "";
    const [width, height] = (asset?.dimensions ?? "").split("x").map(Number);
    const kind = type.startsWith("video/") ? "video" : type === "image/gif" ? "gif" : "image";
    return {
      kind,
      url: kind === "video" ? null : `/dashboard/workspaces/${r.workspace!.id}/assets/${id}/thumbnail`,
      alt: state.alt.get(id)?.trim() || null,
      width: width || null,
      height: height || null,
    };
  };
  return {
    provider: d.channel,
    author: { name: d.name, handle: null, avatarUrl: null },
    items: state.items.map((item) => ({ body: item.text, media: item.media.map(media) })),
  };
}

/** The pane again for the form as typed so far (the script posts it as the person types): its HTML. */
async function paneFragment(r: DashboardRequest, form: URLSearchParams): Promise<Response> {
  if (!mayCompose(r)) return cannotCompose(r);
  const lists = await loadLists(r);
  const state = readState(form);
  const pane = await paneOf(r, lists, state);
  const slot = await nextQueueSlotText(r, state.destinationIds);
  const fragment = html`${composePane(pane)}<span hidden data-next-slot>${slot}</span>`;
  return new Response(fragment.text, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}

/** The form as multipart (with files streamed to disk) or urlencoded (no files). */
async function readComposeForm(r: DashboardRequest): Promise<ReceivedForm | null> {
  const type = r.request.headers.get("content-type") ?? "";
  if (/^multipart\/form-data/i.test(type))
    return readMultipartForm(r.request, {
      maxFileBytes: DASHBOARD_UPLOAD_MAX_BYTES,
      allowFiles: (fields) => r.csrfValid(fields.get("csrf_token")),
    });
  const fields = await readForm(r.request);
  return { fields, files: [], cleanup: async () => {} };
}

const mayCompose = (r: DashboardRequest) => roleAllows(r.session.role, "posts:write");

const cannotCompose = (r: DashboardRequest) =>
  r.message(403, "You cannot compose posts", ["Your role in this account does not include writing posts."]);

interface Lists {
  destinations: ComposeDestination[];
  library: LibraryAsset[];
  /** Whether the workspace tracks links (`link_tracking.enabled`). */
  tracksLinks: boolean;
}

/** The workspace's destinations (all but disabled ones) and its newest hundred ready assets. */
async function loadLists(r: DashboardRequest): Promise<Lists> {
  const ws = r.workspace!.id;
  const [destinations, assets] = await Promise.all([
    r.api.get<Listing<Destination>>(`/workspaces/${ws}/destinations`),
    r.api.get<Listing<Asset>>(`/workspaces/${ws}/assets?limit=100`),
  ]);
  const usable = (destinations.ok ? destinations.body.data : []).filter((d) => d.status !== "disabled");
  // A network's only destination is its default (preselected) as much as one marked so.
  const defaults = defaultDestinationIds(usable);
  return {
    tracksLinks: r.workspace!.tracksLinks,
    destinations: usable.map((d) => ({
      id: d.id,
      channel: d.channel,
      name: d.display_name,
      status: d.status,
      isDefault: defaults.has(d.id),
      networkName: r.h.providers.adapter(d.channel)?.displayName ?? d.channel,
      network: composeOptions(r.h, d.channel),
    })),
    library: (assets.ok ? assets.body.data : [])
      .filter((a) => a.status === "ready")
      .map((a) => ({
        id: a.id,
        label: a.label,
        type: a.type,
        contentType: a.content_type,
        dimensions: a.dimensions,
      })),
  };
}

type Outcome = Pick<ComposeView, "errors" | "problems" | "status">;

async function show(
  r: DashboardRequest,
  lists: Lists,
  state: ComposeState,
  outcome: Outcome,
  status: number,
): Promise<Response> {
  const pane = await paneOf(r, lists, state);
  const view: ComposeView = {
    state,
    ...lists,
    ...outcome,
    timeZone: r.workspace!.timeZone,
    workspaceId: r.workspace!.id,
    csrf: r.csrf,
    directParts: r.h.blobs.kind === "local",
    pane: composePane(pane),
    counters: itemCounters(pane),
    nextSlot: await nextQueueSlotText(r, state.destinationIds),
    nowInZone: nowInZone(r),
  };
  return r.render("Compose", composeContent(view), { section: "compose", status });
}

/**
 * The pane's checks: the form as it is, sent to the validate endpoint (the rules publishing applies).
 * A schedule time not typed yet (or one the zone skips) is checked as "now", and said apart.
 */
async function paneOf(r: DashboardRequest, lists: Lists, state: ComposeState): Promise<PaneInput> {
  const chosen = lists.destinations.filter((d) => state.destinationIds.includes(d.id));
  const previews = new Map<string, Markup>();
  if (chosen.length === 0) return { state, chosen, validation: null, own: [], previews };
  const timeZone = r.workspace!.timeZone;
  const own: string[] = [];
  let checked = state;
  if (state.when === "at") {
    const zoned = localTimeInZone(state.at, timeZone);
    if (!zoned.ok) {
      own.push(
        LOCAL_DATE_TIME.test(state.at) ? `${zoned.detail}.` : "Enter the date and time to publish at.",
      );
      checked = { ...state, when: "now" };
    }
  }
  const body = createBody(checked, chosen, timeZone);
  const at = checked.when === "at" ? (body.when as string) : null;
  chosen.forEach((d, i) => {
    const options = body.posts[i]?.destination_options?.[d.channel] ?? {};
    previews.set(d.id, renderPreview({ ...previewOf(r, lists, state, d), options, at }));
  });
  const answer = await r.api.call<PostValidation>("POST", `/workspaces/${r.workspace!.id}/posts/validate`, {
    body,
  });
  if (!answer.ok) own.push(answer.body?.detail ?? "The post could not be checked just now.");
  return { state, chosen, validation: answer.ok ? answer.body : null, own, previews };
}

/**
 * One submission: files are uploaded and library choices attached whatever the button, then the
 * button's own step (add or remove an item, detach, check, create) runs on the typed state.
 */
async function act(r: DashboardRequest, form: ReceivedForm): Promise<Response> {
  const state = readState(form.fields);
  const op = form.fields.get("op") ?? "check";
  const lists = await loadLists(r);
  const key = form.fields.get("idempotency_key") ?? "";
  const errors: FieldErrors = new Map();
  const uploaded: string[] = [];
  state.items.forEach((item, n) => {
    const add = form.fields.get(`item_${n}_add`);
    if (add && lists.library.some((a) => a.id === add) && !item.media.includes(add)) item.media.push(add);
  });
  for (const file of form.files) {
    const n = Number(/^item_(\d+)_file$/.exec(file.field)?.[1] ?? -1);
    if (!state.items[n]) continue;
    const stored = await storeAsset(r, file, `${key}-item${n}`);
    if (stored.ok) {
      state.items[n]!.media.push(stored.asset.id);
      lists.library.unshift({
        id: stored.asset.id,
        label: stored.asset.label,
        type: stored.asset.type,
        contentType: stored.asset.content_type,
        dimensions: stored.asset.dimensions,
      });
      uploaded.push(`${file.fileName} is attached to item ${n + 1}.`);
    } else {
      if (stored.status === 403) return forbidden(r);
      const details = (stored.problem.errors ?? []).map((e) => e.detail);
      errors.set(`/body/${n}/file`, [stored.problem.detail, ...details].filter(Boolean).join(" "));
    }
  }
  if (errors.size) return show(r, lists, state, { errors, problems: [], status: null }, 422);
  const status = uploaded.length ? uploaded.join(" ") : null;

  const [verb, index, assetId] = op.split(":");
  const notices: string[] = status ? [status] : [];
  const name = (id: string) => lists.library.find((a) => a.id === id)?.label ?? id;
  const n = Number(index);
  const item = state.items[n];
  if (verb === "add" && state.items.length < 100) {
    state.items.push({ text: "", media: [] });
    notices.push(`Item ${state.items.length} is added.`);
  }
  if (verb === "remove" && state.items.length > 1 && item) {
    state.items.splice(n, 1);
    notices.push(`Item ${n + 1} is removed.`);
  }
  if (verb === "detach" && item && assetId) {
    item.media = item.media.filter((id) => id !== assetId);
    notices.push(`${name(assetId)} is detached from item ${n + 1}.`);
  }
  if (verb === "move" && item && assetId) {
    const at = item.media.indexOf(assetId);
    if (at > 0) {
      item.media.splice(at - 1, 0, ...item.media.splice(at, 1));
      notices.push(`${name(assetId)} is now media ${at} of item ${n + 1}.`);
    }
  }
  if (verb === "attach")
    state.items.forEach((it, i) => {
      const added = form.fields.get(`item_${i}_add`);
      if (added && it.media.includes(added)) notices.push(`${name(added)} is attached to item ${i + 1}.`);
    });
  if (verb === "refresh") notices.push("The options of the chosen destinations are shown.");
  if (verb !== "check" && verb !== "create")
    return show(r, lists, state, { errors, problems: [], status: notices.join(" ") || null }, 200);
  return submit(r, lists, state, verb, key, status);
}

/** Checks (the dry run) or creates the posts, and shows the API's errors next to their fields. */
async function submit(
  r: DashboardRequest,
  lists: Lists,
  state: ComposeState,
  verb: "check" | "create",
  key: string,
  status: string | null,
): Promise<Response> {
  const chosen = lists.destinations.filter((d) => state.destinationIds.includes(d.id));
  const fields = new Set(formFields({ state, ...lists }).keys());
  const own: FieldErrors = new Map();
  if (chosen.length === 0) own.set("/destination_ids", "Choose at least one destination.");
  const zoned = state.when === "at" ? localTimeInZone(state.at, r.workspace!.timeZone) : null;
  if (zoned && !zoned.ok) {
    const typed = LOCAL_DATE_TIME.test(state.at);
    own.set(
      "/at",
      typed ? `${zoned.detail}; choose another time.` : "Enter the date and time to publish at.",
    );
  }
  if (own.size) return show(r, lists, state, { errors: own, problems: [], status }, 400);

  const body = createBody(state, chosen, r.workspace!.timeZone);
  const base = `/workspaces/${r.workspace!.id}/posts`;
  if (verb === "check") {
    const answer = await r.api.call<PostValidation>("POST", `${base}/validate`, { body });
    if (answer.status === 403) return forbidden(r);
    const found = answer.ok ? answer.body.errors : (answer.body?.errors ?? [{ detail: answer.body?.detail }]);
    const mapped = formErrors(found, { state, chosen, fields });
    const warnings = answer.ok ? answer.body.warnings : [];
    if (answer.ok && found.length === 0 && warnings.length === 0)
      return show(r, lists, state, { errors: new Map(), problems: [], status: "No problems found." }, 200);
    if (answer.ok && found.length === 0) {
      // A draft is saved as it is: its problems are what publishing it would refuse.
      const warned = formErrors(warnings, { state, chosen, fields });
      const saved =
        "The draft can be saved as it is, but publishing it would be refused for the problems shown.";
      return show(r, lists, state, { errors: warned.fields, problems: warned.other, status: saved }, 200);
    }
    return show(
      r,
      lists,
      state,
      { errors: mapped.fields, problems: mapped.other, status },
      answer.ok ? 422 : answer.status,
    );
  }
  const answer = await r.api.call<PostSet>("POST", base, { body, idempotencyKey: key || undefined });
  if (answer.ok) {
    // 202 with the drafts awaiting approval: the workspace requires it and this person cannot approve.
    const first = answer.body.posts[0]!;
    const path = `/dashboard/workspaces/${r.workspace!.id}/posts/${first.id}`;
    return r.redirect(
      withNotice(path, "post", first.approval?.status === "requested" ? "sent-for-approval" : "created"),
    );
  }
  if (answer.status === 403) return forbidden(r);
  if (answer.status >= 500 || answer.status === 401)
    return r.message(502, "The post could not be saved", [answer.body?.detail ?? "Try again in a moment."]);
  const mapped = formErrors(answer.body?.errors ?? [], { state, chosen, fields });
  const problems =
    mapped.other.length || mapped.fields.size
      ? mapped.other
      : [answer.body?.detail ?? "The post was refused."];
  return show(r, lists, state, { errors: mapped.fields, problems, status }, answer.status);
}

const forbidden = (r: DashboardRequest) =>
  r.message(403, "Not allowed", ["Your role in this account does not allow this."]);
