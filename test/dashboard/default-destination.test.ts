// A network's only destination is its default: the compose page chooses it for a new post and the
// destinations page labels it, as the CLI's --channel picks it. Two of a network with none marked: none.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { insertXDestination, X_APP_ENV } from "../posts/fixtures.ts";
import {
  connectOwnersBluesky,
  dashboardWorld,
  type DashboardWorld,
  screenOf,
  type TestBrowser,
} from "./support.ts";

let world: DashboardWorld;
let bluesky: BlueskyFake;
let owner: TestBrowser;
let ws: string;

beforeAll(async () => {
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...X_APP_ENV } });
  ws = world.owner.workspaceId;
  bluesky = await startBlueskyFake();
  await connectOwnersBluesky(world, bluesky);
  await insertXDestination(world.s, ws);
  await insertXDestination(world.s, ws);
  owner = await world.signedIn();
});
afterAll(async () => {
  await world.stop();
  await bluesky.stop();
});

describe("a network's only destination", () => {
  test("is chosen on a new post's compose page; two of a network, neither marked, are not", async () => {
    const screen = screenOf((await owner.get(`/dashboard/workspaces/${ws}/posts/new`)).text);
    const boxes = screen.getAllByRole("checkbox").filter((b) => b.attribs.name === "destination_ids");
    const checked = boxes.map((b) => [screen.nameOf(b), b.attribs.checked !== undefined]);
    expect(checked.filter(([, on]) => on).map(([name]) => name)).toEqual([
      expect.stringContaining("alice.test"),
    ]);
    expect(checked.filter(([, on]) => !on)).toHaveLength(2);
  });

  test("is labelled Default on the destinations page", async () => {
    const screen = screenOf((await owner.get(`/dashboard/workspaces/${ws}/destinations`)).text);
    const records = screen.recordsOf(screen.getByRole("table", { name: "Connected accounts" }));
    const defaults = records.filter((r) => r.Default === "Default").map((r) => r.Account);
    expect(defaults).toEqual(["alice.test"]);
  });
});
