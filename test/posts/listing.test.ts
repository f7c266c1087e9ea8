import { describe, expect, test } from "bun:test";
import { ProblemError } from "../../src/core/problem.ts";
import { postListingFilter } from "../../src/modules/posts/listing.ts";

describe("the post listing filter", () => {
  test("a view names its states; no view is every state", () => {
    expect(postListingFilter({}).states).toBeNull();
    expect(postListingFilter({ view: "drafts" }).states).toEqual(["draft"]);
  });

  test("a state narrows its view and must belong to it", () => {
    expect(postListingFilter({ view: "attention", state: "missed" }).states).toEqual(["missed"]);
    expect(postListingFilter({ view: "all", state: "draft" }).states).toEqual(["draft"]);
    expect(() => postListingFilter({ view: "drafts", state: "published" })).toThrow(ProblemError);
  });

  test("time filters are exact times with an offset", () => {
    const filter = postListingFilter({ created_after: "2026-01-01T00:00:00Z" });
    expect(filter.createdAfter).toBe(Date.UTC(2026, 0, 1));
    expect(() => postListingFilter({ scheduled_before: "now" })).toThrow(ProblemError);
    expect(() => postListingFilter({ created_after: "2026-01-01" })).toThrow(ProblemError);
  });
});
