/** A registered route as Elysia lists it. */
interface RouteEntry {
  method: string;
  path: string;
}

/** A route path pattern (`/v1/workspaces/:workspace_id`, `*`) as a regular expression over raw paths. */
function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (segment.startsWith(":")) return segment.endsWith("?") ? "[^/]*" : "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}$`);
}

/**
 * The methods the registered routes answer on a path, for 405 and its Allow header. Built from the
 * app's routes on first use (after every route is registered) and only consulted for requests no
 * route matched.
 */
export class AllowedMethods {
  private table: { pattern: RegExp; methods: Set<string> }[] | null = null;

  constructor(private readonly routes: () => readonly RouteEntry[]) {}

  /** The methods that `path` answers to, sorted; empty when no route has the path. */
  of(path: string): string[] {
    this.table ??= this.build();
    const methods = new Set<string>();
    for (const entry of this.table) {
      if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method);
    }
    return [...methods].sort();
  }

  private build(): { pattern: RegExp; methods: Set<string> }[] {
    const byPath = new Map<string, Set<string>>();
    for (const route of this.routes()) {
      if (route.method === "ALL" || route.method === "WS") continue;
      let methods = byPath.get(route.path);
      if (!methods) byPath.set(route.path, (methods = new Set()));
      methods.add(route.method);
      // Bun and Elysia answer HEAD from the GET route.
      if (route.method === "GET") methods.add("HEAD");
    }
    return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }));
  }
}
