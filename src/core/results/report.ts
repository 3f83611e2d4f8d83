/** Rendering of results: the Markdown table and the CSV of per-level aggregates. */
import type { LevelResult, ResultDocument } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { profilePoints } from "../../shared/measures.ts";
import { gpuTelemetryText } from "../../shared/testbed.ts";
import { measureName } from "../../shared/verdict-text.ts";
import { sloGiven } from "../../shared/workload.ts";
import { clientOnlyLateMs } from "./validity.ts";

type Saturation = NonNullable<ResultDocument["saturation"]>;

const fmt = (v: number | null | undefined, digits: number): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(digits);

/** The steady column: the window's length, or "no" (the figures are the whole level's). */
const steadyCell = (l: LevelResult): string =>
  l.steady_state === undefined
    ? "-"
    : l.steady_state.steady
      ? `${l.steady_state.window_s.toFixed(1)} s`
      : "no";

const gpuCell = (l: LevelResult, v: number | null | undefined, d: number) =>
  !l.gpu ? "-" : v === null || v === undefined ? "?" : fmt(v, d);

/**
 * The reading of the self-check's timing note (load/self-check.ts: "timing noise: the client read
 * about 6.7 ms late …"), ms, or null for any other notice: the report and the terminal both fold
 * one note per level into one line.
 */
export function timingNoteMs(notice: string): number | null {
  const m = /^timing noise: the client read about ([\d.]+) ms late/.exec(notice);
  return m ? Number(m[1]) : null;
}

interface Column {
  title: string;
  cell: (l: LevelResult) => string;
}

const pct0 = (v: number | null | undefined) => (v === null || v === undefined ? "-" : `${v.toFixed(0)}%`);

/**
 * The level table's columns for these levels: SLO pass and goodput only when SLOs were given
 * (without one every request "passes", which says nothing); offered and achieved rates for open
 * loop, so a server that fell behind shows it in the table that introduces it.
 */
export function markdownColumns(levels: readonly LevelResult[], hasSlo: boolean): Column[] {
  const open = levels.some((l) => l.mode === "open");
  return [
    { title: "level", cell: (l) => String(l.level) },
    ...(open
      ? [
          { title: "offered req/s", cell: (l: LevelResult) => fmt(l.open_loop?.target_rate_rps, 2) },
          { title: "achieved req/s", cell: (l: LevelResult) => fmt(l.open_loop?.achieved_rate_rps, 2) },
        ]
      : []),
    { title: "req", cell: (l) => String(l.requests) },
    { title: "err", cell: (l) => String(l.errors) },
    { title: "out tok/s", cell: (l) => fmt(l.output_tok_s, 0) },
    { title: "TTFT p50 (ms)", cell: (l) => fmt(l.ttft_ms.p50, 1) },
    { title: "TTFT p95 (ms)", cell: (l) => fmt(l.ttft_ms.p95, 1) },
    { title: "ITL p50 (ms)", cell: (l) => fmt(l.itl_ms.p50, 2) },
    { title: "ITL p95 (ms)", cell: (l) => fmt(l.itl_ms.p95, 2) },
    { title: "TPOT p50 (ms)", cell: (l) => fmt(l.tpot_ms.p50, 2) },
    ...(hasSlo
      ? [
          { title: "SLO pass", cell: (l: LevelResult) => pct0(l.slo_pass_pct) },
          { title: "goodput req/s", cell: (l: LevelResult) => fmt(l.goodput_req_s, 2) },
        ]
      : []),
    { title: "cached", cell: (l) => pct0(l.cached_tokens_pct) },
    { title: "steady", cell: steadyCell },
    // GPU energy where telemetry was taken ("?" where the level's energy is unknown: see its reason)
    ...(levels.some((l) => l.gpu)
      ? [
          { title: "GPU W", cell: (l: LevelResult) => gpuCell(l, l.gpu?.mean_power_w, 0) },
          { title: "tok/J", cell: (l: LevelResult) => gpuCell(l, l.gpu?.output_tok_per_j, 3) },
        ]
      : []),
    ...(levels.some((l) => l.gpu?.usd_per_m_output_tok != null)
      ? [{ title: "$/M out tok", cell: (l: LevelResult) => gpuCell(l, l.gpu?.usd_per_m_output_tok, 3) }]
      : []),
  ];
}

export function markdownTable(levels: readonly LevelResult[], slo = true): string {
  const cols = markdownColumns(levels, slo);
  const head = `| ${cols.map((c) => c.title).join(" | ")} |`;
  const sep = `|${cols.map(() => "---:").join("|")}|`;
  const rows = levels.map((l) => `| ${cols.map((c) => c.cell(l)).join(" | ")} |`);
  return [head, sep, ...rows].join("\n");
}

type Described = Pick<
  ResultDocument,
  "kind" | "levels" | "config" | "saturation" | "target" | "created_at" | "tool" | "startup"
> &
  Partial<Pick<ResultDocument, "repeats" | "profile" | "gpu_telemetry" | "frontier">>;

/** What was measured, before any figure: target, model, workload, date, version, notices. */
export function reportHeader(doc: Described): string {
  const c = doc.config;
  const workload =
    doc.kind === "profile"
      ? "single-stream serving profile"
      : c
        ? [
            c.search?.tier
              ? `search for the agent capacity @ ${c.search.tier.name}`
              : c.search
                ? "search for the saturation rate"
                : `${c.mode} loop at ${c.mode === "closed" ? "concurrency" : "req/s"} ${c.levels.join(", ")}`,
            c.dataset
              ? `dataset ${c.dataset.name}`
              : c.agent_sessions
                ? `agent sessions ${c.agent_sessions.name} (${c.agent_sessions.sessions} sessions, ${c.agent_sessions.calls} calls)`
                : c.trace
                  ? `trace ${c.trace.name}`
                  : `${c.prompt_tokens} prompt tokens`,
            `${c.max_tokens} max tokens${c.ignore_eos ? " (ignore_eos)" : ""}`,
            c.requests_per_level !== null
              ? `${c.requests_per_level} requests per level`
              : `${c.duration_s} s per level`,
            ...(doc.repeats && doc.repeats.length > 1
              ? [`${doc.repeats.length} repeats (each figure their median)`]
              : []),
          ].join("; ")
        : "";
  // The self-check's timing note, one per level, is one line here: the levels and the worst reading.
  const timing = doc.levels.flatMap((l) =>
    l.notices
      .map(timingNoteMs)
      .filter((ms) => ms !== null)
      .map((ms) => ({ level: l.level, ms })),
  );
  const notices = [
    ...(timing.length > 0
      ? [
          `timing noise at level${timing.length > 1 ? "s" : ""} ${timing.map((t) => t.level).join(", ")}: the machine woke the client up to ${maxOf(timing.map((t) => t.ms)).toFixed(1)} ms late (p99 estimate), not client load; TTFT and ITL carry up to that much of it`,
        ]
      : []),
    ...new Set(
      doc.levels.flatMap((l) =>
        l.notices
          .filter((n) => timingNoteMs(n) === null)
          .map((n) => (n.startsWith("level ") ? n : `level ${l.level}: ${n}`)),
      ),
    ),
  ];
  const shown = notices.slice(0, 5);
  const gpuLine = doc.gpu_telemetry ? ` GPU telemetry: ${gpuTelemetryText(doc.gpu_telemetry)}.` : "";
  return [
    `# tokenbench ${doc.kind}: ${doc.target.model}`,
    "",
    `${doc.target.base_url} (${doc.target.api} API); ${workload}. Measured ${doc.created_at} by tokenbench ${doc.tool.version}.${gpuLine}`,
    ...(shown.length > 0
      ? [
          "",
          `Notices (${notices.length}${notices.length > shown.length ? `; the JSON has all of them` : ""}):`,
          "",
          ...shown.map((n) => `- ${n}`),
        ]
      : []),
  ].join("\n");
}

/**
 * A sweep's Markdown: the level table, then what the workload adds: how the saturation point was
 * found (`--mode search`), TTFT per turn (`--turns`), and how closely a trace's times were kept.
 */
export function markdownReport(doc: Described): string {
  if (doc.kind === "profile") return [reportHeader(doc), profileTable(doc as ResultDocument)].join("\n\n");
  const parts = [reportHeader(doc), markdownTable(doc.levels, sloGiven(doc.config))];
  const unsteady = doc.levels.filter((l) => l.steady_state && !l.steady_state.steady);
  if (unsteady.length > 0)
    parts.push(
      `**No steady state** at ${unsteady.length === doc.levels.length ? "any level" : `level${unsteady.length > 1 ? "s" : ""} ${unsteady.map((l) => l.level).join(", ")}`}: their figures are the whole level's, ramp and drain included (${unsteady[0]!.steady_state!.reason}). Steady levels report their window (the steady column).`,
    );
  const s = doc.saturation;
  if (s?.agents)
    parts.push(
      `**Agent capacity:** ${agentCapacityHeadline(s.agents, s.probes, doc.levels)}.\n\nHow it was found: ${s.method}.`,
    );
  else if (s)
    parts.push(
      `**Saturation:** ${saturationHeadline(s, doc.levels)}.\n\nHow it was found: ${s.method}; a probe passes when at least ${s.target_pass_pct}% of its requests meet every SLO.`,
    );
  const turned = doc.levels.filter((l) => l.turns && l.turns.length > 0);
  if (turned.length > 0) {
    const sessions = doc.config?.sessions;
    const rows = turned.flatMap((l) =>
      l.turns!.map(
        (t) =>
          `| ${l.level} | ${t.turn} | ${t.ok} | ${fmt(t.ttft_ms.p50, 1)} | ${fmt(t.ttft_ms.p95, 1)} | ${fmt(t.prompt_tokens.p50, 0)} | ${t.cached_tokens_pct === null ? "-" : `${t.cached_tokens_pct.toFixed(0)}%`} |`,
      ),
    );
    parts.push(
      [
        `**Conversations** (${sessions?.turns ?? "?"} turns, ${sessions?.think_time_ms ?? 0} ms think time): TTFT per turn`,
        "",
        "| level | turn | ok | TTFT p50 (ms) | TTFT p95 (ms) | prompt tokens p50 | cached |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        ...rows,
      ].join("\n"),
    );
  }
  const split = doc.levels.filter((l) => l.ttft_split);
  if (split.length > 0)
    parts.push(
      [
        "**TTFT split** (ms; from the server's own prompt time per request: queue = before the server began the prompt, its queue and the transport; prefill = its prompt time; client = the client's median lateness)",
        "",
        "| level | TTFT p50 | queue | prefill | client | TTFT p95 | queue | prefill | client | uncached prompt tokens (p95 band) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...split.map((l) => {
          const x = l.ttft_split!;
          const q = (p: typeof x.p50) =>
            `${fmt(p.queue_ms, 1)} | ${fmt(p.prefill_ms, 1)} | ${fmt(p.client_ms, 1)}`;
          return `| ${l.level} | ${fmt(l.ttft_ms.p50, 1)} | ${q(x.p50)} | ${fmt(l.ttft_ms.p95, 1)} | ${q(x.p95)} | ${fmt(x.p95.uncached_tokens, 0)} |`;
        }),
      ].join("\n"),
    );
  const means = doc.levels.filter((l) => l.server_means);
  if (means.length > 0)
    parts.push(
      [
        "**The server's means** (ms; its own /metrics histograms over the steady window, the whole level without one: the mean time the requests it finished there spent in each phase, beside the client's TTFT and E2E p50)",
        "",
        "| level | requests | queue | prefill | decode | server TTFT | client TTFT p50 | server E2E | client E2E p50 | prefix cache hits |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...means.map((l) => {
          const m = l.server_means!;
          return `| ${l.level} | ${m.requests} | ${fmt(m.queue_ms, 1)} | ${fmt(m.prefill_ms, 1)} | ${fmt(m.decode_ms, 1)} | ${fmt(m.ttft_ms, 1)} | ${fmt(l.ttft_ms.p50, 1)} | ${fmt(m.e2e_ms, 1)} | ${fmt(l.e2e_ms.p50, 1)} | ${pct0(m.prefix_cache_hit_pct)} |`;
        }),
      ].join("\n"),
    );
  const jobbed = doc.levels.filter((l) => l.jobs);
  // per GPU only where the GPU telemetry counted the GPUs
  const perGpu = jobbed.some((l) => l.jobs!.jobs_per_hour_per_gpu != null);
  if (jobbed.length > 0)
    parts.push(
      [
        "**Jobs** (a conversation is one job, as an agent's session: first send to last answer, waits included)",
        "",
        `| level | jobs | cut short | job p50 (s) | job p95 (s) | jobs/h per user |${perGpu ? " jobs/h per GPU |" : ""} calls per job | output tokens per job | waiting | cached | cached per job p50 / min |`,
        `|---:|---:|---:|---:|---:|---:|${perGpu ? "---:|" : ""}---:|---:|---:|---:|---:|`,
        ...jobbed.map((l) => {
          const j = l.jobs!;
          const gpu = perGpu ? ` ${fmt(j.jobs_per_hour_per_gpu ?? null, 1)} |` : "";
          return `| ${l.level} | ${j.complete} | ${j.incomplete} | ${fmt(j.e2e_s.p50, 2)} | ${fmt(j.e2e_s.p95, 2)} | ${fmt(j.jobs_per_hour_per_user, 1)} |${gpu} ${fmt(j.calls_per_job, 1)} | ${fmt(j.output_tokens_per_job, 0)} | ${j.wait_share === null ? "-" : `${(100 * j.wait_share).toFixed(0)}%`} | ${pct0(j.cached_tokens_pct)} | ${j.cached_pct_per_job?.n ? `${pct0(j.cached_pct_per_job.p50)} / ${pct0(j.cached_pct_per_job.min)}` : "-"} |`;
        }),
      ].join("\n"),
    );
  const shaped = doc.levels.filter((l) => l.ttfat_ms || l.tt_first_tool_call_ms);
  if (shaped.length > 0)
    parts.push(
      [
        "**Reasoning and tool calls:** TTFT is the first token of any kind; TTFAT the first answer token after any reasoning",
        "",
        "| level | TTFT p50 (ms) | TTFAT p50 (ms) | TTFAT p95 (ms) | TTFAT p99 (ms) | reasoning p50 (ms) | reasoning tokens p50 | answer tokens p50 | first tool call p50 (ms) | tool calls |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...shaped.map(
          (l) =>
            `| ${l.level} | ${fmt(l.ttft_ms.p50, 1)} | ${fmt(l.ttfat_ms?.p50, 1)} | ${fmt(l.ttfat_ms?.p95, 1)} | ${fmt(l.ttfat_ms?.p99, 1)} | ${fmt(l.reasoning_ms?.p50, 1)} | ${fmt(l.reasoning_tokens?.p50, 0)} | ${fmt(l.answer_tokens?.p50, 0)} | ${fmt(l.tt_first_tool_call_ms?.p50, 1)} | ${l.tool_calls_total ?? "-"} |`,
        ),
      ].join("\n"),
    );
  if (doc.frontier) parts.push(frontierText(doc.frontier));
  const spread = doc.levels.filter((l) => l.endpoints);
  if (spread.length > 0) parts.push(endpointsTable(spread));
  if (doc.startup) parts.push(`**Server start:** ${startupText(doc.startup)}.`);
  const trace = doc.config?.trace;
  const ol = doc.levels[0]?.open_loop;
  if (trace && ol)
    parts.push(
      `**Trace replay:** ${trace.name} at ${trace.speed}x, ${doc.levels[0]!.requests} requests; replay lag (actual − scheduled send) p50 ${fmt(ol.schedule_lag_ms.p50, 2)} ms, p99 ${fmt(ol.schedule_lag_ms.p99, 2)} ms, max ${fmt(ol.schedule_lag_ms.max, 2)} ms.`,
    );
  return parts.join("\n\n");
}

/** The throughput-interactivity frontier: its points (Pareto ones marked) and its figures at each target speed. */
function frontierText(f: NonNullable<ResultDocument["frontier"]>): string {
  const perGpu = f.gpus !== null;
  const front = f.points.filter((p) => p.pareto);
  const rows = f.points.map(
    (p) =>
      `| ${p.level} | ${fmt(p.tok_s_per_user, 1)} | ${fmt(p.output_tok_s, 1)} |${perGpu ? ` ${fmt(p.output_tok_s_per_gpu, 1)} |` : ""} ${fmt(p.ttft_p90_ms, 1)} | ${p.pareto ? "yes" : ""} |`,
  );
  const targets = f.targets.map((t) =>
    t.reached
      ? `- at ${fmt(t.tok_s_per_user, 1)} tok/s per user (between levels ${t.between.join(" and ")}): ${fmt(t.output_tok_s, 1)} output tok/s${perGpu ? ` (${fmt(t.output_tok_s_per_gpu, 1)} per GPU)` : ""}${t.usd_per_m_output_tok !== null ? `, $${fmt(t.usd_per_m_output_tok, 3)} per million output tokens` : ""}${t.j_per_output_tok !== null ? `, ${fmt(t.j_per_output_tok, 3)} J per output token (${fmt(t.output_tok_per_kwh, 0)} tokens per kWh)` : ""}`
      : `- at ${fmt(t.tok_s_per_user, 1)} tok/s per user: not reached (the frontier spans ${fmt(front[0]?.tok_s_per_user ?? null, 1)} to ${fmt(front.at(-1)?.tok_s_per_user ?? null, 1)}; never extrapolated)`,
  );
  return [
    "**Frontier** (output tok/s against tok/s per user = 1000 / TPOT p50; Pareto: no other level is faster in both)",
    "",
    `| level | tok/s per user | output tok/s |${perGpu ? " per GPU |" : ""} TTFT p90 (ms) | Pareto |`,
    `|---:|---:|---:|${perGpu ? "---:|" : ""}---:|:---:|`,
    ...rows,
    ...(targets.length > 0 ? ["", ...targets] : []),
  ].join("\n");
}

/** `--base-url A,B`: each level per server, and how unevenly the work went. */
function endpointsTable(levels: readonly ResultDocument["levels"][number][]): string {
  const strategy = levels[0]!.endpoints!.strategy;
  return [
    `**Servers** (${strategy}; imbalance: the busiest server's output tokens over an even share, minus 1)`,
    "",
    "| level | server | requests | share | errors | output tok/s | TTFT p50 (ms) | TTFT p95 (ms) | E2E p50 (ms) | running (mean) | imbalance |",
    "|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...levels.flatMap((l) =>
      l.endpoints!.by_endpoint.map(
        (e, i) =>
          `| ${l.level} | ${e.base_url} | ${e.requests} | ${e.requests_pct.toFixed(0)}% | ${e.errors} | ${fmt(e.output_tok_s, 1)} | ${fmt(e.ttft_p50_ms, 1)} | ${fmt(e.ttft_p95_ms, 1)} | ${fmt(e.e2e_p50_ms, 1)} | ${fmt(e.metrics?.running_mean ?? null, 1)} | ${i === 0 ? fmt(l.endpoints!.imbalance, 2) : ""} |`,
      ),
    ),
  ].join("\n");
}

/** "ready in 4.21 s (first answer 0.02 s, first token 4.40 s; model loaded 4.19 s); warm: ..." */
function startupText(s: NonNullable<ResultDocument["startup"]>): string {
  const one = (x: Omit<typeof s, "warm">) => {
    const parts = [
      x.answered_s != null ? `first answer ${x.answered_s.toFixed(2)} s` : null,
      x.first_token_s != null ? `first token ${x.first_token_s.toFixed(2)} s` : null,
      ...(x.phases ?? []).map((p) => `${p.phase} ${p.at_s.toFixed(2)} s`),
    ].filter((p) => p !== null);
    return `ready in ${x.ready_s.toFixed(2)} s${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
  };
  return `${one(s)} from the command's start${s.warm ? `; warm restart: ${one(s.warm)}` : ""}`;
}

/** "12 sessions @ interactive (TTFT p95 ≤ 2000 ms, ≥ 60 tok/s per user; 13 failed)", or why not. */
export function agentCapacityHeadline(
  a: NonNullable<Saturation["agents"]>,
  probes: number,
  levels: readonly LevelResult[] = [],
): string {
  const t = a.tier;
  const tier = `@ ${t.name} (TTFT p95 ≤ ${t.ttft_p95_ms} ms, ≥ ${t.tok_s_per_user} tok/s per user)`;
  const [lo, hi] = a.bracket_sessions;
  if (lo === null) return `no probed session count met the tier ${tier}: lower the starting --levels`;
  const per = [
    a.per_gpu !== null ? `${a.per_gpu.toPrecision(3)} per GPU` : null,
    a.per_kw !== null ? `${a.per_kw.toPrecision(3)} per kW` : null,
  ].filter((x) => x !== null);
  const fail =
    hi === null
      ? `no probe failed in ${probes}: raise --search-max-probes or the starting --levels`
      : `${hi} failed${clientBoundAt(levels, hi) ? " while the client was the bottleneck (the capacity may be higher: more --workers, or a quieter runner)" : ""}`;
  return `${a.max_sessions} concurrent sessions ${tier}; ${fail}${per.length > 0 ? `; ${per.join(", ")}` : ""}`;
}

/** Whether the probe at `level` was invalid only for its client's lateness (what failed it may be the client's). */
function clientBoundAt(levels: readonly LevelResult[], level: number): boolean {
  const l = levels.find((x) => x.level === level);
  return l !== undefined && clientOnlyLateMs(l) !== null;
}

/** "sustains 31.5 req/s under SLO (bracket 30.8–32.3)", or why not. */
export function saturationHeadline(s: Saturation, levels: readonly LevelResult[] = []): string {
  const f = (x: number | null) => (x === null ? "?" : x.toPrecision(3));
  const [lo, hi] = s.bracket_rps;
  if (lo === null)
    return `no probed rate kept ${s.target_pass_pct}% of requests within the SLOs (lowest probe failed): lower the starting --levels`;
  if (hi === null)
    return `sustains at least ${f(lo)} req/s under SLO (no probe failed in ${s.probes}: raise --search-max-probes or the starting rate)`;
  const widePct = (100 * (hi - lo)) / hi;
  const ranOut = s.max_probes !== undefined ? s.probes >= s.max_probes : true;
  const of = s.max_probes !== undefined ? ` of ${s.max_probes}` : "";
  // Wider than 3 %: the probes ran out, or the search closed at 3 % and the answer is what the
  // highest passing probe delivered, below the rate it was offered.
  const why =
    widePct <= 3
      ? ""
      : ranOut
        ? `; the bracket is ${widePct.toFixed(0)} % wide: the probes ran out before 3 %, raise --search-max-probes`
        : `; the bracket is ${widePct.toFixed(0)} % wide below: the highest passing probe delivered ${f(lo)} req/s of the rate it was offered`;
  // a failing probe read late by its own client: lateness only adds to TTFT, so what passed is the
  // server's, but what failed there may have been the client's
  const client = clientBoundAt(levels, hi)
    ? `; the probe at ${f(hi)} req/s failed while the client was the bottleneck (the rate may be higher: more --workers, or a quieter runner)`
    : "";
  return `sustains ${f(s.max_rate_rps)} req/s under SLO (bracket ${f(lo)}–${f(hi)}; ${f(s.pass_pct_at_max)}% of requests within SLO there, goodput ${f(s.goodput_at_max_rps)} req/s; ${s.probes}${of} probes${why}${client})`;
}

/** A profile's comparable figures, one row each (the JSON has the whole profile). */
function profileTable(doc: ResultDocument): string {
  const pts = profilePoints(doc);
  return [
    "| benchmark | measure | value |",
    "|---|---|---:|",
    ...pts.map((p) => `| ${p.benchmark} | ${measureName(p.measure)} | ${fmt(p.value, 2)} |`),
  ].join("\n");
}
