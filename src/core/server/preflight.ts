/**
 * First contact, before any load is sent: wait for readiness, take the server's metadata, make
 * sure the model is one the server serves, and, for a sweep, size the prompts to the server's own
 * token count and refuse a workload that cannot fit the server's context. Each failure is one
 * error with a stable code that names the URL, the cause and what to do. The sweep and the
 * profile both start here; what comes out has its model resolved.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { PromptCalibration, ServerSnapshot, SweepConfig } from "../../schema/v1.ts";
import { MAX_SAMPLE_PROMPT_TOKENS } from "../workload/sample-lengths.ts";
import { calibratePrompts } from "./calibration.ts";
import { oneTokenRequest } from "./http.ts";
import { probeModel, resolveModel, servedModels } from "./model.ts";
import { type Readiness, waitReady } from "./readiness.ts";
import { snapshotServer } from "./snapshot.ts";
import {
  completionsPath,
  endpointTargets,
  type ResolvedTarget,
  rootUrl,
  type Target,
  withModel,
} from "./target.ts";

export interface Preflight {
  target: ResolvedTarget;
  readiness: Readiness;
  server: ServerSnapshot;
  /** How the sweep's prompts are sized to the server's own count; null: one word per token. */
  calibration: PromptCalibration | null;
}

export interface PreflightOptions {
  readyTimeoutS: number;
  /** `--server-limit key=value`: limits the server does not expose, recorded in the snapshot. */
  serverLimits: Record<string, string | number>;
  /** Size the sweep's prompts (`--calibrate-prompts`); a dataset's prompts are never sized. */
  calibrate: boolean;
  onNotice: (m: string) => void;
  /** The Action's started server: why it is gone, or null while it runs. */
  serverExited?: () => string | null;
  /** Called once the server is ready and its model known, before any calibration (the start's first token). */
  afterReady?: (target: ResolvedTarget, readiness: Readiness) => Promise<void>;
  /** `--trace`, `--agent-sessions`: the longest request (prompt and output tokens), checked against the context. */
  longest?: { promptTokens: number; outputTokens: number };
}

/** The longest prompt a sweep sends: one turn's, or a whole conversation's last turn (`--turns`). */
function conversationPromptTokens(cfg: SweepConfig, turnTokens: number): number {
  const turns = cfg.sessions?.turns ?? 1;
  return turns * turnTokens + (turns - 1) * cfg.max_tokens + (cfg.shared_prefix?.tokens ?? 0);
}

/** The served-model check: a model the server does not list must at least be answered. */
async function checkModel(target0: Target, server: ServerSnapshot, notice: (m: string) => void) {
  const served = servedModels(server);
  const target = await resolveModel(target0, served[0] ?? null);
  if (served.length === 0 || served.includes(target.model)) return target;
  const refusal = await probeModel(target, target.model);
  if (refusal !== null) {
    throw new TokenbenchError(
      "model_not_served",
      `${rootUrl(target)} does not serve model "${target.model}" (it said: ${refusal.slice(0, 200)}); it serves: ${served.join(", ")}. Pass one of them to --model`,
    );
  }
  if (served.length > 1) return target;
  notice(
    `the server answers any model name and serves one model: "${served[0]}" is recorded as the model, not "${target.model}"`,
  );
  return withModel(target, served[0]!);
}

async function sweepCalibration(
  target: ResolvedTarget,
  cfg: SweepConfig,
  o: PreflightOptions,
): Promise<PromptCalibration | null> {
  // A dataset's prompts are what they are: nothing to size, and their lengths are the server's count.
  if (!o.calibrate || cfg.dataset) return null;
  const calibration = await calibratePrompts(target, cfg.extra_body, cfg.prompt_tokens, cfg.seed);
  o.onNotice(
    `prompts: ${calibration.words} words give ${calibration.reached_tokens} prompt tokens as the server counts them (asked ${calibration.target_tokens}; ${calibration.method}${calibration.template_overhead_tokens ? ` + ${calibration.template_overhead_tokens} template tokens` : ""})`,
  );
  if (!calibration.within_tolerance)
    o.onNotice(
      `prompt calibration reached ${calibration.reached_tokens} tokens, outside ${calibration.tolerance_rule}`,
    );
  return calibration;
}

function checkContext(
  target: ResolvedTarget,
  server: ServerSnapshot,
  cfg: SweepConfig,
  calibration: PromptCalibration | null,
  longest: PreflightOptions["longest"],
): void {
  const context = server.extracted.context_length;
  if (typeof context !== "number" || cfg.dataset) return;
  const prompt = longest
    ? longest.promptTokens
    : cfg.prompts === "sample"
      ? MAX_SAMPLE_PROMPT_TOKENS
      : conversationPromptTokens(cfg, calibration?.reached_tokens ?? cfg.prompt_tokens);
  const output = longest ? longest.outputTokens : cfg.max_tokens;
  if (prompt + output > context) {
    throw new TokenbenchError(
      "prompt_too_long",
      `a prompt of ${prompt} tokens plus ${output} output tokens does not fit the server's context of ${context} tokens (${rootUrl(target)}): ${longest ? "the workload file's longest request needs a server with a longer context" : `lower ${cfg.sessions ? "--turns, " : ""}--prompt-tokens or --max-tokens, or start the server with a longer context`}`,
    );
  }
}

/**
 * The Responses and Messages APIs are newer than chat completions: a server without one answers
 * 404 (vLLM and SGLang before they served it, TGI), which would otherwise surface as a
 * calibration failure or as every request's error.
 */
async function checkApiServed(target: ResolvedTarget): Promise<void> {
  const r = await oneTokenRequest(target, target.model);
  const [name, version] =
    target.api === "messages" ? ["Messages API", "/v1/messages"] : ["Responses API", "/v1/responses"];
  if (r.status === 404 || r.status === 405 || r.status === 501)
    throw new TokenbenchError(
      "api_unsupported",
      `${rootUrl(target)} does not serve the ${name} (POST ${completionsPath(target.api)} answered HTTP ${r.status}: ${(r.text ?? "").slice(0, 120)}): use --api chat, or a server version that has ${version}`,
    );
}

/** `--base-url A,B`: each other server ready and serving the model the first one does. */
async function checkReplica(other: ResolvedTarget, first: string, o: PreflightOptions): Promise<void> {
  await waitReady(other, { timeoutS: o.readyTimeoutS, onWait: o.onNotice });
  const refusal = await probeModel(other, other.model);
  if (refusal !== null)
    throw new TokenbenchError(
      "model_not_served",
      `${rootUrl(other)} (one of the --base-url servers) does not answer model "${other.model}", which ${first} serves (it said: ${refusal.slice(0, 200)}): every server named must serve the same model; check that each was started with it`,
    );
}

/**
 * Readiness, snapshot and the model check; then, for a sweep (`cfg` not null), the prompt
 * calibration and the context check. The profile passes null: it calibrates its own targets.
 */
export async function preflight(
  target0: Target,
  cfg: SweepConfig | null,
  o: PreflightOptions,
): Promise<Preflight> {
  const readiness = await waitReady(target0, {
    timeoutS: o.readyTimeoutS,
    onWait: o.onNotice,
    ...(o.serverExited ? { serverExited: o.serverExited } : {}),
  });
  const server = await snapshotServer(target0, o.serverLimits);
  const target = await checkModel(target0, server, o.onNotice);
  if (target.api === "responses" || target.api === "messages") await checkApiServed(target);
  for (const other of endpointTargets(target).slice(1)) await checkReplica(other, rootUrl(target), o);
  await o.afterReady?.(target, readiness);
  if (cfg === null) return { target, readiness, server, calibration: null };
  const calibration = await sweepCalibration(target, cfg, o);
  checkContext(target, server, cfg, calibration, o.longest);
  return { target, readiness, server, calibration };
}
