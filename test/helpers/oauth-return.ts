// Herald's OAuth return page as a person's browser meets it: a connection started with an API key
// stops on a confirmation page (naming the accounts, the workspace and the Herald account) until the
// person presses "Connect"; this follows it so tests of the networks can connect in one call.
import { screenOf, attributeOf, formOf, valueOf } from "./screen.ts";

/**
 * Opens the return page `url` (redirects followed); when it asks for confirmation, submits its
 * "Connect" button with the page's cookies (the CSRF key), like the person would. Answers the last page.
 */
export async function returnFromOAuth(url: string): Promise<Response> {
  const back = await fetch(url);
  if (back.status !== 200) return back;
  const text = await back.clone().text();
  const screen = screenOf(text);
  const connect = screen.queryByRole("button", { name: /^Connect / });
  if (!connect) return back;
  const form = formOf(connect)!;
  const fields = new URLSearchParams();
  for (const input of screen.within(form).elements("input"))
    fields.append(attributeOf(input, "name")!, valueOf(input));
  fields.append(attributeOf(connect, "name")!, attributeOf(connect, "value")!);
  const cookie = back.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return fetch(new URL(attributeOf(form, "action")!, url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: fields,
  });
}
