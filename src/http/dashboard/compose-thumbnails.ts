import { ProblemError } from "../../core/problem.ts";
import { downloadAsset } from "../../modules/assets/service.ts";
import type { Asset } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";

/**
 * `/dashboard/workspaces/:workspace_id/assets/:asset_id/thumbnail`: an image of the workspace as the
 * compose page shows it, for the signed-in person. The asset and its five-minute download link come
 * from the API (so its workspace rules apply); Herald's own link is served in-process, a bucket's is
 * fetched and passed on (the page's CSP loads images from Herald only).
 */
export function thumbnailRoute(routes: DashboardRoutes): void {
  routes.page("/dashboard/workspaces/:workspace_id/assets/:asset_id/thumbnail", async (r) => {
    const id = r.params.asset_id ?? "";
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) return notFound();
    const asset = await r.api.get<Asset>(`/workspaces/${r.workspace!.id}/assets/${id}?include=download`);
    if (!asset.ok || !asset.body.download_url || !asset.body.content_type.startsWith("image/"))
      return notFound();
    return imageOf(r, asset.body.download_url, asset.body.content_type);
  });
}

async function imageOf(r: DashboardRequest, link: string, contentType: string): Promise<Response> {
  const url = new URL(link);
  const own = /^\/downloads\/([^/]+)$/.exec(url.pathname);
  let answer: Response;
  if (url.origin === new URL(r.h.config.baseUrl).origin && own) {
    try {
      answer = await downloadAsset(r.h, own[1]!, {
        expires: url.searchParams.get("expires") ?? undefined,
        signature: url.searchParams.get("signature") ?? undefined,
      });
    } catch (error) {
      if (error instanceof ProblemError) return notFound();
      throw error;
    }
  } else {
    answer = await fetch(url);
    if (!answer.ok) {
      await answer.body?.cancel().catch(() => {});
      return notFound();
    }
  }
  return new Response(answer.body, {
    headers: {
      "content-type": contentType,
      "cache-control": "private, max-age=300",
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
    },
  });
}

const notFound = () => new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });
