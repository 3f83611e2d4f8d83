/** Badges: SVG and shields.io JSON of a series' latest value and verdict, and a sparkline. */
import { Hono } from "hono";
import { headline, MEASURE_BY_NAME } from "../../shared/measures.ts";
import { judge } from "../../shared/statistics.ts";
import { badgeSvg, formatValue, shieldsJson, sparklineSvg } from "../badge.ts";
import { type AppEnv, type Ctx, knownRepo, routeRepo } from "../context.ts";
import { latestRun, runPoints, series } from "../db.ts";
import { ApiError } from "../errors.ts";

export const badges = new Hono<AppEnv>();

async function badgeData(c: Ctx, repo: string) {
  const db = c.get("db");
  let benchmark = c.req.query("benchmark") ?? null;
  let measure = c.req.query("measure") ?? null;
  const testbed = c.req.query("testbed") ?? null;
  const branch = c.req.query("branch") ?? null;
  if (benchmark === null || measure === null) {
    const latest = await latestRun(db, repo, branch);
    if (latest === null) return null;
    const h = headline(await runPoints(db, latest.id));
    if (h === null) return null;
    benchmark ??= h.benchmark;
    measure ??= h.measure;
  }
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) throw new ApiError(400, "unknown_measure", `unknown measure ${measure}`);
  const pts = await series(db, repo, { benchmark, measure, testbed, branch, limit: 31, since: null });
  if (pts.length === 0)
    return { benchmark, measure: def, points: [] as number[], verdict: "none" as const, latest: null };
  const [latest, ...rest] = pts;
  const v = judge(
    rest.map((p) => p.value),
    latest!.value,
    def.direction,
  ).verdict;
  return {
    benchmark,
    measure: def,
    points: pts.map((p) => p.value).reverse(),
    verdict: v,
    latest: latest!.value,
  };
}

/** `output tok/s @ c16`, `TTFT p95 @ 4 req/s`, `decode tok/s @ profile decode`: the measure and where. */
export function badgeLabel(measureLabel: string, benchmark: string): string {
  const closed = /^closed c=(\S+)$/.exec(benchmark);
  const open = /^open (\S+ req\/s)$/.exec(benchmark);
  return `${measureLabel} @ ${closed ? `c${closed[1]}` : open ? open[1] : benchmark}`;
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
  const d = await badgeData(c, repo);
  const label = (c.req.query("label") ?? (d ? badgeLabel(d.measure.label, d.benchmark) : "tokenbench")).slice(
    0,
    100,
  );
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
  const d = await badgeData(c, repo);
  return cached(c, sparklineSvg(d?.points ?? []), "image/svg+xml; charset=utf-8");
});
