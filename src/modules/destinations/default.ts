/**
 * Which destination is its network's default in a workspace: the one marked `is_default`, or, when none
 * is marked, the network's only destination (as `herald posts create --channel` picks it). The compose
 * page preselects these and the destinations page labels them.
 */
export function defaultDestinationIds<D extends { id: string; channel: string; is_default: boolean }>(
  destinations: readonly D[],
): Set<string> {
  const byChannel = new Map<string, D[]>();
  for (const d of destinations) byChannel.set(d.channel, [...(byChannel.get(d.channel) ?? []), d]);
  const ids = new Set<string>();
  for (const list of byChannel.values()) {
    const marked = list.find((d) => d.is_default);
    if (marked) ids.add(marked.id);
    else if (list.length === 1) ids.add(list[0]!.id);
  }
  return ids;
}
