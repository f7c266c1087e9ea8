/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a child process or server that needs its
 * port chosen before it starts (a server in this process listens on port 0 instead).
 */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}
