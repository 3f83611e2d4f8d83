/**
 * `tokenbench merge`: the documents of a run sharded across runners (`--shard i/n`) as one
 * document. Refused unless they are the same workload against the same target, every shard is
 * there once, and their clocks agree; then every level is recomputed from the union of the
 * records (exact percentiles, not an average of the shards' percentiles), on the first shard's
 * timeline.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { LevelResult, RequestRecord, ResultDocument } from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import { frontierOf } from "../../shared/frontier.ts";
import { mergeRuns } from "../load/level-run.ts";
import { worstOf } from "../load/self-check.ts";
import { summariseLevel } from "../results/level-summary.ts";
import { sameConfig } from "../sweep/config.ts";

export interface ShardFile {
  path: string;
  doc: ResultDocument;
  records: RequestRecord[];
  /** Records at a level the document does not list (readResults): an unfinished shard. */
  unlisted?: number;
}

export class MergeError extends TokenbenchError {
  constructor(message: string) {
    super("merge_refused", message);
  }
}

/** The default for how far the shards' level starts may lie apart (clock skew plus scheduling). */
export const DEFAULT_CLOCK_TOLERANCE_MS = 50;

/** Every `*_ms` time of a record moved by `deltaMs` (onto another origin). */
function shiftRecord(r: RequestRecord, deltaMs: number): RequestRecord {
  if (deltaMs === 0) return r;
  const m = (x: number | null) => (x === null ? null : x + deltaMs);
  return {
    ...r,
    intended_send_ms: m(r.intended_send_ms),
    send_ms: r.send_ms + deltaMs,
    ...(r.dispatch_ms !== undefined ? { dispatch_ms: r.dispatch_ms + deltaMs } : {}),
    ...(r.connected_ms !== undefined ? { connected_ms: r.connected_ms + deltaMs } : {}),
    headers_ms: m(r.headers_ms),
    first_token_ms: m(r.first_token_ms),
    last_token_ms: m(r.last_token_ms),
    end_ms: m(r.end_ms),
    event_times_ms: r.event_times_ms.map((t) => t + deltaMs),
    ...(r.server_event_times_ms !== undefined
      ? { server_event_times_ms: r.server_event_times_ms.map((t) => t + deltaMs) }
      : {}),
    ...(r.server_arrival_ms !== undefined ? { server_arrival_ms: r.server_arrival_ms + deltaMs } : {}),
  };
}

const wallOrigin = (d: ResultDocument) => Date.parse(d.clock.origin_wall_time);

/** Why these files cannot be merged, in one message naming the files and the fields; else null. */
function refusal(files: ShardFile[], toleranceMs: number): string | null {
  const name = (f: ShardFile) => f.path;
  for (const f of files) {
    if (f.doc.kind !== "sweep" || f.doc.config === null) return `${name(f)} is not a sweep`;
    if (!f.doc.load_generator?.shard) return `${name(f)} is not a shard (it was not run with --shard i/n)`;
    if (f.records.length === 0)
      return `${name(f)} has no per-request records (run the shards with --records inline or file)`;
    if ((f.unlisted ?? 0) > 0)
      return `${name(f)} holds ${f.unlisted} records at a level its document does not list (a level in progress when that shard was killed): finish it with --resume, or run the shard again`;
  }
  const shards = files.map((f) => f.doc.load_generator!.shard!);
  const n = Number(shards[0]!.split("/")[1]);
  const counts = new Set(shards.map((s) => s.split("/")[1]));
  if (counts.size > 1) return `the files are shards of different splits: ${shards.join(", ")}`;
  const seen = new Set<string>();
  for (const s of shards) {
    if (seen.has(s)) return `shard ${s} is given twice`;
    seen.add(s);
  }
  const missing = Array.from({ length: n }, (_, i) => `${i + 1}/${n}`).filter((s) => !seen.has(s));
  if (missing.length > 0) return `shard(s) ${missing.join(", ")} missing: all ${n} are needed`;
  const [first, ...rest] = files;
  const a = first!.doc;
  for (const f of rest) {
    const b = f.doc;
    if (!sameConfig(a.config!, b.config!))
      return `${name(f)} measured a different workload than ${name(first!)} (config differs: ${diffKeys(a.config!, b.config!).join(", ")})`;
    if (
      a.target.base_url !== b.target.base_url ||
      a.target.model !== b.target.model ||
      a.target.api !== b.target.api
    )
      return `${name(f)} measured ${b.target.base_url} (${b.target.model}), ${name(first!)} measured ${a.target.base_url} (${a.target.model})`;
    const la = a.levels.map((l) => l.level).join(",");
    const lb = b.levels.map((l) => l.level).join(",");
    if (la !== lb) return `${name(f)} has levels ${lb}, ${name(first!)} has ${la} (an unfinished shard?)`;
    if (a.load_generator!.start_at_epoch_ms !== b.load_generator!.start_at_epoch_ms)
      return `${name(f)} started at ${b.load_generator!.start_at_epoch_ms}, ${name(first!)} at ${a.load_generator!.start_at_epoch_ms} (--start-at must be the same)`;
  }
  for (let li = 0; li < a.levels.length; li++) {
    const starts = files.map((f) => wallOrigin(f.doc) + f.doc.levels[li]!.started_at_ms);
    const spread = maxOf(starts) - minOf(starts);
    if (spread > toleranceMs)
      return `level ${a.levels[li]!.level} started ${spread.toFixed(0)} ms apart on the shards (tolerance ${toleranceMs} ms): their clocks disagree, or a runner was late for its slot`;
  }
  return null;
}

function diffKeys(a: object, b: object): string[] {
  const ka = a as Record<string, unknown>;
  const kb = b as Record<string, unknown>;
  return Object.keys({ ...ka, ...kb }).filter((k) => JSON.stringify(ka[k]) !== JSON.stringify(kb[k]));
}

/** The merged self-check: each runner's threads (or the runner itself) as one shard each. */
function mergedClient(levels: LevelResult[]): LevelResult["client"] {
  const shards = levels.flatMap((l, i) =>
    (
      l.client.shards ?? [
        {
          thread: "1/1",
          requests: l.requests + l.warmup_requests,
          event_loop_delay_ms: l.client.event_loop_delay_ms,
          lateness_bound_ms: l.client.lateness_bound_ms ?? null,
          busy_pct: l.client.cpu_pct_of_one_core,
          bottleneck_warning: l.client.bottleneck_warning,
        },
      ]
    ).map((s) => ({ ...s, thread: `runner ${i + 1}/${levels.length} thread ${s.thread}` })),
  );
  const warnings = shards
    .filter((s) => s.bottleneck_warning)
    .map((s) => `${s.thread}: ${s.bottleneck_warning}`);
  const notes = levels
    .map((l, i) =>
      l.client.timing_note ? `runner ${i + 1}/${levels.length}: ${l.client.timing_note}` : null,
    )
    .filter((w): w is string => w !== null);
  return {
    event_loop_delay_ms: {
      p50: worstOf(levels.map((l) => l.client.event_loop_delay_ms.p50)),
      p99: worstOf(levels.map((l) => l.client.event_loop_delay_ms.p99)),
      max: worstOf(levels.map((l) => l.client.event_loop_delay_ms.max)),
    },
    lateness_bound_ms: worstOf(levels.map((l) => l.client.lateness_bound_ms)),
    cpu_user_s: levels.reduce((a, l) => a + l.client.cpu_user_s, 0),
    cpu_system_s: levels.reduce((a, l) => a + l.client.cpu_system_s, 0),
    cpu_pct_of_one_core: levels.reduce((a, l) => a + l.client.cpu_pct_of_one_core, 0),
    bottleneck_warning: warnings.length > 0 ? warnings.join("; ") : null,
    timing_note: warnings.length === 0 && notes.length > 0 ? notes.join("; ") : null,
    shards,
  };
}

export function mergeShards(
  input: ShardFile[],
  o: { toleranceMs?: number } = {},
): { doc: ResultDocument; records: RequestRecord[] } {
  if (input.length < 2) throw new MergeError("merge needs the documents of at least two shards");
  const toleranceMs = o.toleranceMs ?? DEFAULT_CLOCK_TOLERANCE_MS;
  // Shard order, so the first shard's timeline and server metrics are the merged document's.
  const files = [...input].sort(
    (x, y) =>
      Number(x.doc.load_generator?.shard?.split("/")[0]) - Number(y.doc.load_generator?.shard?.split("/")[0]),
  );
  const why = refusal(files, toleranceMs);
  if (why !== null) throw new MergeError(`cannot merge: ${why}`);
  const base = files[0]!.doc;
  const cfg = base.config!;
  const origin0 = wallOrigin(base);
  const all = files.flatMap((f) => f.records.map((r) => shiftRecord(r, wallOrigin(f.doc) - origin0)));
  const ids = new Set<number>();
  for (const r of all) {
    if (ids.has(r.id)) throw new MergeError(`cannot merge: request id ${r.id} appears in two shards`);
    ids.add(r.id);
  }
  const levels = base.levels.map((l0, li) => {
    const lvl = files.map((f) => f.doc.levels[li]!);
    const measured = all.filter((r) => r.level === l0.level && !r.warmup);
    const intended = measured.map((r) => r.intended_send_ms).filter((x): x is number => x !== null);
    const run = mergeRuns([
      {
        records: measured,
        droppedArrivals: lvl.reduce((a, l) => a + (l.open_loop?.dropped_arrivals ?? 0), 0),
        drainTimeS: null,
        ...(intended.length > 0 ? { lastIntendedMs: maxOf(intended) } : {}),
      },
    ]);
    const { result } = summariseLevel({
      cfg,
      level: l0.level,
      run,
      warmupRequests: lvl.reduce((a, l) => a + l.warmup_requests, 0),
      client: mergedClient(lvl),
      sampler: null,
      limits: { maxRunningRequests: null, cudaGraphMaxBs: null },
      notices: [],
    });
    const merged: LevelResult = {
      ...result,
      notices: [
        ...result.notices,
        `merged from ${files.length} shards; the server's /metrics timeline and admission are shard 1's`,
      ],
    };
    if (l0.admission !== undefined) merged.admission = l0.admission;
    if (l0.metrics_timeline !== undefined) merged.metrics_timeline = l0.metrics_timeline;
    return merged;
  });
  const doc: ResultDocument = {
    ...base,
    levels,
    requests: null,
    requests_file: null,
    load_generator: {
      workers: maxOf(files.map((f) => f.doc.load_generator!.workers)),
      shard: null,
      start_at_epoch_ms: base.load_generator!.start_at_epoch_ms,
      merged_from: files.map((f) => f.path),
    },
    complete: files.every((f) => f.doc.complete),
  };
  // the frontier of the merged levels, not shard 1's
  const frontier = frontierOf(doc);
  if (frontier) doc.frontier = frontier;
  else delete doc.frontier;
  return { doc, records: all.sort((a, b) => a.id - b.id) };
}
