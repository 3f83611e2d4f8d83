/**
 * Workload identity: what was asked of the server, as one canonical object and its
 * fingerprint. Two runs compare like with like only when their workloads are equal; the fields
 * that differ are named. Pure (the fingerprint's hash is the caller's: Node or Web Crypto).
 */
import type { ResultDocument } from "../schema/v1.ts";

/**
 * The workload of a document: API, model, mode, levels, requests per level (or duration),
 * lengths, arrivals, SLOs, ignore_eos, body. Levels are in it for the fingerprint, but two runs
 * with other levels still compare at the levels both measured (workloadDiff leaves them out).
 */
export function workloadSpec(doc: ResultDocument): Record<string, unknown> {
  const c = doc.config;
  const p = doc.profile?.config;
  const common = { kind: doc.kind, api: doc.target.api, model: doc.target.model };
  if (c)
    return {
      ...common,
      mode: c.mode,
      levels: c.levels,
      // A type-7 p99 reads lower from fewer requests: runs of other lengths are other workloads.
      requests_per_level: c.requests_per_level,
      // the default count adds 2 per user in closed loop: another count than the same number
      // given (named only when true, so a given count's identity is what it always was)
      ...(c.requests_default === true ? { requests_default: true } : {}),
      duration_s: c.duration_s,
      prompt_tokens: c.prompt_tokens,
      max_tokens: c.max_tokens,
      prompts: c.prompts,
      ignore_eos: c.ignore_eos,
      arrival: c.mode === "open" ? c.arrival : null,
      burstiness: c.mode === "open" ? c.burstiness : null,
      max_in_flight: c.max_in_flight,
      slo: c.slo,
      extra_body: c.extra_body,
      // Only when there is one, so fingerprints of synthetic-prompt runs stay what they were.
      ...(c.dataset ? { dataset: c.dataset.sha256 } : {}),
      ...(c.dataset_reuse ? { dataset_reuse: c.dataset_reuse } : {}),
      ...(c.ramp_up_s ? { ramp_up_s: c.ramp_up_s } : {}),
      ...(c.shared_prefix ? { shared_prefix: c.shared_prefix } : {}),
      ...(c.sessions ? { sessions: c.sessions } : {}),
      ...(c.agent_sessions ? { agent_sessions: c.agent_sessions.sha256 } : {}),
      ...(c.agent_sessions?.tool_wait ? { tool_wait: c.agent_sessions.tool_wait } : {}),
      // an agent-capacity search's tier: its thresholds are what "capacity" means
      ...(c.search?.tier ? { agent_tier: c.search.tier } : {}),
      ...(c.trace ? { trace: { sha256: c.trace.sha256, speed: c.trace.speed } } : {}),
      ...(c.tools ? { tools: { sha256: c.tools.sha256, choice: c.tools.choice } } : {}),
      ...(c.reasoning_tags ? { reasoning_tags: c.reasoning_tags } : {}),
      ...(c.responses_chain ? { responses_chain: true } : {}),
      ...(c.cancel ? { cancel: c.cancel } : {}),
      // a cold cache at every level is another workload than a warm one (only when asked)
      ...(c.cache_reset ? { cache_reset: c.cache_reset.mode } : {}),
      // What the server did with it (a server that ignored ignore_eos) is no part of what was asked:
      // such a level is not valid (core/results/validity.ts `short_output`), its rows not judged.
    };
  if (p)
    return {
      ...common,
      targets: p.targets,
      decode_tokens: p.decode_tokens,
      suffix_tokens: p.suffix_tokens,
      thinking: p.thinking,
      extra_body: p.extra_body,
    };
  return common;
}

/**
 * The fields whose values differ between two documents' workloads (empty: like with like).
 * Levels are not among them: a level on one side only is a row without a baseline.
 */
export function workloadDiff(
  a: ResultDocument,
  b: ResultDocument,
): { field: string; a: unknown; b: unknown }[] {
  const { levels: _a, ...x } = workloadSpec(a);
  const { levels: _b, ...y } = workloadSpec(b);
  return [...new Set([...Object.keys(x), ...Object.keys(y)])]
    .filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k]))
    .map((field) => ({ field, a: x[field], b: y[field] }));
}

/** Whether a sweep was given any SLO: without one, SLO pass and goodput say nothing (every request passes). */
export function sloGiven(config: ResultDocument["config"]): boolean {
  const s = config?.slo;
  return (
    !!s && (s.ttft_ms !== null || s.tpot_ms !== null || s.e2e_ms !== null || (s.ttfat_ms ?? null) !== null)
  );
}
