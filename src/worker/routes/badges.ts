/** Badges: SVG and shields.io JSON of a series' latest value and verdict, and a sparkline. */
import { Hono } from "hono";
import { headline, MEASURE_BY_NAME } from "../../shared/measures.ts";
import { VERDICTS, type Verdict } from "../../shared/verdict.ts";
import { badgeSvg, formatValue, shieldsJson, sparklineSvg } from "../badge.ts";
import { type AppEnv, type Ctx, knownRepo, routeRepo } from "../context.ts";
import { latestRun, runPoints, series } from "../db.ts";
import { ApiError } from "../errors.ts";
import { QUERIES, readQuery, type Values } from "../query-params.ts";

export const badges = new Hono<AppEnv>();

async function badgeData(c: Ctx, repo: string, q: Values<typeof QUERIES.badge>) {
  const db = c.get("db");
  let benchmark = q.benchmark;
  let def = q.measure;
  const { testbed, branch } = q;
  if (benchmark === null || def === null) {
    const latest = await latestRun(db, repo, branch);
    if (latest === null) return null;
    const h = headline(await runPoints(db, latest.id));
    if (h === null) return null;
    benchmark ??= h.benchmark;
    def ??= MEASURE_BY_NAME.get(h.measure) ?? null;
    if (def === null) return null;
  }
  const measure = def.name;
  const pts = await series(db, repo, { benchmark, measure, testbed, branch, limit: 31, since: null });
  if (pts.length === 0)
    return { benchmark, measure: def, points: [] as number[], verdict: "none" as const, latest: null };
  // The verdict its run was given when it arrived (the engine's, with the run's own rules).
  const latest = pts.find((p) => p.valid !== 0) ?? pts[0]!;
  const v = (VERDICTS as readonly string[]).includes(latest.verdict ?? "")
    ? (latest.verdict as Verdict)
    : ("none" as const);
  return {
    benchmark,
    measure: def,
    points: pts.map((p) => p.value).reverse(),
    verdict: v,
    latest: latest.value,
  };
}

/** `output tok/s @ c16`, `TTFT p95 @ 4 req/s`, `output tok/s @ 30 tok/s/user`, `decode tok/s @ profile decode`: the measure and where. */
export function badgeLabel(measureLabel: string, benchmark: string): string {
  const closed = /^closed c=(\S+)$/.exec(benchmark);
  const open = /^open (\S+ req\/s)$/.exec(benchmark);
  const tier = /^agent capacity (\S+)$/.exec(benchmark);
  const speed = /^at (\S+) tok\/s per user$/.exec(benchmark);
  const where = closed
    ? `c${closed[1]}`
    : open
      ? open[1]
      : tier
        ? tier[1]
        : speed
          ? `${speed[1]} tok/s/user`
          : benchmark;
  return `${measureLabel} @ ${where}`;
}

function cached(c: Ctx, body: string, type: string): Response {
  let h = 0;
  for (let i = 0; i < body.length; i++) h = (Math.imul(h, 31) + body.charCodeAt(i)) | 0;
  const etag = `W/"${(h >>> 0).toString(16)}-${body.length}"`;
  const headers = { "content-type": type, etag, "cache-control": "public, max-age=60" };
  if (c.req.header("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(body, { status: 200, headers });
}

badges.get("/:owner/:file", async (c) => {
  const file = c.req.param("file");
  const m = /^(.+)\.(svg|json)$/.exec(file);
  if (!m) throw new ApiError(404, "not_found", "badge paths end in .svg or .json");
  const repo = knownRepo(c, `${c.req.param("owner")}/${m[1]!}`);
  const q = readQuery(c, QUERIES.badge, { unknown: "ignore" });
  const d = await badgeData(c, repo, q);
  const label = q.label ?? (d ? badgeLabel(d.measure.label, d.benchmark) : "tokenbench");
  const message = d && d.latest !== null ? formatValue(d.latest, d.measure.unit) : "no data";
  const verdict = d?.verdict ?? "none";
  const resp =
    m[2] === "svg"
      ? cached(c, badgeSvg(label, message, verdict), "image/svg+xml; charset=utf-8")
      : cached(c, JSON.stringify(shieldsJson(label, message, verdict)), "application/json");
  return resp;
});

badges.get("/:owner/:repo/sparkline.svg", async (c) => {
  const repo = routeRepo(c);
  const d = await badgeData(c, repo, readQuery(c, QUERIES.badge, { unknown: "ignore" }));
  return cached(c, sparklineSvg(d?.points ?? []), "image/svg+xml; charset=utf-8");
});

/** The few words a grey badge shows for an error, where a README has no room for a sentence. */
function badgeWords(err: ApiError): string {
  const parameter = (err.details as { parameter?: unknown } | undefined)?.parameter;
  switch (err.code) {
    case "unknown_measure":
      return "unknown measure";
    case "repository_not_found":
      return "unknown repository";
    case "read_token_required":
      return "private";
    case "invalid_query":
      return typeof parameter === "string" ? `bad ${parameter}` : "bad query";
    case "not_found":
      return "not found";
    default:
      return "error";
  }
}

/**
 * Whatever went wrong, a badge URL answers an image (200, so GitHub's image proxy shows it): grey,
 * with a few words of the cause; the error's code and message travel in headers for who looks.
 */
export function badgeFailure(path: string, err: ApiError): Response {
  const words = badgeWords(err);
  const headers = {
    "x-tokenbench-error": err.code,
    "x-tokenbench-error-message": encodeURIComponent(err.message.slice(0, 300)),
    "cache-control": "no-cache",
  };
  if (path.endsWith(".json"))
    return new Response(JSON.stringify({ ...shieldsJson("tokenbench", words, "none"), isError: true }), {
      status: 200,
      headers: { ...headers, "content-type": "application/json" },
    });
  const body = path.endsWith("/sparkline.svg")
    ? sparklineSvg([], 120, 24, words)
    : badgeSvg("tokenbench", words, "none");
  return new Response(body, {
    status: 200,
    headers: { ...headers, "content-type": "image/svg+xml; charset=utf-8" },
  });
}
