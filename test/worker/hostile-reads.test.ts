/**
 * The read side's hostile corpus: every GET parameter is validated with a 400 naming it (no 200
 * with no data for a typo or a bad date), and a badge URL answers an image whatever went wrong.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { apiToken, call, json, sweepDoc, type TestEnv, upload } from "./helpers.ts";

const REPO = "acme/reads";
const SERIES = `/api/v1/repos/${REPO}/series?benchmark=closed%20c%3D4&measure=output_tok_s`;

beforeAll(async () => {
  const t = await apiToken(REPO);
  for (let i = 0; i < 3; i++) expect((await upload(sweepDoc(REPO), t)).status).toBe(201);
});

/** A 400 whose code is `code` and whose message and details name `parameter`. */
async function refused(path: string, parameter: string, code = "invalid_query") {
  const res = await call(path);
  expect(res.status, path).toBe(400);
  const body = await json(res);
  expect(body.error.code, path).toBe(code);
  expect(body.error.message, path).toContain(parameter);
  expect(body.error.details, path).toEqual({ parameter });
  return body.error.message as string;
}

describe("GET parameters: a 400 naming the parameter", () => {
  it("since that is not a date (was 200 with no points)", async () => {
    for (const since of ["not-a-date", "2026-13-45", "yesterday", "1e12", "2026-11-01T25:00:00Z"])
      expect(await refused(`${SERIES}&since=${encodeURIComponent(since)}`, "since")).toMatch(/ISO 8601/);
    // a real date filters: all three points are after 2000, none after 2999
    expect((await json(call(`${SERIES}&since=2000-01-01`))).points).toHaveLength(3);
    expect((await json(call(`${SERIES}&since=2999-01-01T00:00:00Z`))).points).toHaveLength(0);
    expect((await json(call(`${SERIES}&since=2000-01-01T00:00:00%2B02:00`))).points).toHaveLength(3);
  });

  it("numbers out of range or not numbers", async () => {
    for (const limit of ["abc", "1e2", "-1", "0", "1001", "2.5", " "])
      if (limit.trim() !== "") await refused(`${SERIES}&limit=${encodeURIComponent(limit)}`, "limit");
    await refused(`/api/v1/repos/${REPO}/runs?limit=101`, "limit");
    await refused(`/api/v1/repos/${REPO}/compare?n=0`, "n");
    await refused(`/api/v1/repos/${REPO}/compare?confidence=2`, "confidence");
    await refused(
      `/api/v1/repos/${REPO}/change-points?benchmark=x&measure=output_tok_s&p_value=NaN`,
      "p_value",
    );
  });

  it("unknown and doubled parameters", async () => {
    const msg = await refused(`/api/v1/repos/${REPO}/runs?limt=5`, "limt", "unknown_parameter");
    expect(msg).toMatch(/this route takes branch, testbed, sha, pr, limit, cursor/);
    await refused(`/api/v1/repos?page=2`, "page", "unknown_parameter");
    await refused(`/api/v1/repos/${REPO}/catalog?x=1`, "x", "unknown_parameter");
    await refused(`${SERIES}&limit=1&limit=2`, "limit");
    await refused(`${SERIES}&measure=ttft_p95_ms`, "measure"); // measure given twice
  });

  it("ids, shas and names in the wrong form", async () => {
    await refused(`/api/v1/repos/${REPO}/runs?sha=xyz`, "sha");
    await refused(`/api/v1/repos/${REPO}/compare?head=..%2F..%2Fetc`, "head");
    await refused(`/api/v1/repos/${REPO}/runs?branch=main%00evil`, "branch");
    await refused(`/api/v1/repos/${REPO}/runs?testbed=${"x".repeat(300)}`, "testbed");
    await refused(`/api/v1/repos/${REPO}/series?benchmark=closed%20c%3D4`, "measure");
    await refused(`/api/v1/repos/${REPO}/series?benchmark=x&measure=nope`, "measure", "unknown_measure");
    // empty values are absent, as an HTML form sends them
    expect((await call(`${SERIES}&testbed=&since=`)).status).toBe(200);
  });

  it("the OpenAPI document lists the parameters the routes read", async () => {
    const oa = await json(call("/openapi.json"));
    const series = oa.paths["/api/v1/repos/{owner}/{repo}/series"].get.parameters as {
      name: string;
      schema: { format?: string };
    }[];
    expect(series.map((p) => p.name)).toEqual([
      "owner",
      "repo",
      "benchmark",
      "measure",
      "testbed",
      "branch",
      "limit",
      "since",
    ]);
    expect(series.find((p) => p.name === "since")!.schema.format).toBe("date-time");
  });
});

describe("image routes answer an image, whatever went wrong", () => {
  /** A 200 SVG (GitHub's image proxy shows only a 200) with the words and the error's code. */
  async function image(path: string, words: string, code: string | null, e: TestEnv = env) {
    const res = await call(path, {}, e);
    expect(res.status, path).toBe(200);
    expect(res.headers.get("content-type"), path).toMatch(/^image\/svg\+xml/);
    expect(res.headers.get("x-tokenbench-error"), path).toBe(code);
    const svg = await res.text();
    expect(svg, path).toMatch(/^<svg /);
    expect(svg, path).toContain(words);
    return svg;
  }

  it("an unknown measure: grey 'unknown measure' (was 400 JSON on an image URL)", async () => {
    const svg = await image(`/badge/${REPO}.svg?measure=nope`, "unknown measure", "unknown_measure");
    expect(svg).toContain("#9f9f9f");
    await image(`/badge/${REPO}/sparkline.svg?measure=nope`, "unknown measure", "unknown_measure");
    const j = await call(`/badge/${REPO}.json?measure=nope`);
    expect(j.status).toBe(200);
    expect(await j.json()).toEqual({
      schemaVersion: 1,
      label: "tokenbench",
      message: "unknown measure",
      color: "lightgrey",
      isError: true,
    });
  });

  it("no data, an unknown repository, a bad parameter, a private service", async () => {
    await image(`/badge/acme/no-such-repo.svg`, "no data", null);
    await image(`/badge/acme/no-such-repo/sparkline.svg`, "no data", null);
    await image(`/badge/a..b/c.svg`, "unknown repository", "repository_not_found");
    await image(`/badge/${REPO}.svg?branch=a%00b`, "bad branch", "invalid_query");
    await image(`/badge/${REPO}.svg?benchmark=closed%20c%3D4&benchmark=x`, "bad benchmark", "invalid_query");
    await image(`/badge/${REPO}.svg`, "private", "read_token_required", { ...env, READ_TOKEN: "s3cret" });
  });

  it("a cache-busting parameter a README adds still gets the real badge", async () => {
    const svg = await image(`/badge/${REPO}.svg?v=2&style=flat`, "tok/s", null);
    expect(svg).not.toContain("#9f9f9f");
  });
});
