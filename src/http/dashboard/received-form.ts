import { BodyTooLarge, FormRefused, type ReceivedForm } from "./multipart.ts";
import type { DashboardRequest } from "./router.ts";

/**
 * A multipart dashboard form from reading to clean-up: refused when it cannot be read or its CSRF token
 * is wrong, 413 with `tooLarge` when it is over its limit, else `act` on it; its received files are
 * always removed afterwards.
 */
export async function actOnReceivedForm(
  r: DashboardRequest,
  read: (r: DashboardRequest) => Promise<ReceivedForm | null>,
  tooLarge: string[],
  act: (r: DashboardRequest, form: ReceivedForm) => Promise<Response>,
): Promise<Response> {
  let form: ReceivedForm | null;
  try {
    form = await read(r);
  } catch (error) {
    if (error instanceof FormRefused) return r.refused();
    if (error instanceof BodyTooLarge) return r.message(413, "The file is too large", tooLarge);
    throw error;
  }
  if (!form || !r.csrfValid(form.fields.get("csrf_token"))) {
    await form?.cleanup();
    return r.refused();
  }
  try {
    return await act(r, form);
  } finally {
    await form.cleanup();
  }
}
