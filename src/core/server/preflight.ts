/**
 * First contact, before any load is sent: wait for readiness, take the server's metadata, make
 * sure the model is one the server serves, size the prompts to the server's own token count,
 * and refuse a workload that cannot fit the server's context. Each failure is one error with
 * a stable code that names the URL, the cause and what to do.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { PromptCalibration, ServerSnapshot, SweepConfig } from "../../schema/v1.ts";
import { MAX_SAMPLE_PROMPT_TOKENS } from "../workload/sample-lengths.ts";
import { oneTokenRequest, resolveModel } from "./http.ts";
import { calibratePrompts } from "./prompt-calibration.ts";
import { type Readiness, snapshotServer, waitReady } from "./snapshot.ts";
import { rootUrl, type Target, withModel } from "./target.ts";

export interface Preflight {
  target: Target;
  readiness: Readiness;
  server: ServerSnapshot;
  calibration: PromptCalibration | null;
}

/** Model ids the server lists at /v1/models (from the snapshot). */
export function servedModels(server: ServerSnapshot): string[] {
  const body = server.endpoints["/v1/models"]?.body as { data?: { id?: unknown }[] } | undefined;
  return Array.isArray(body?.data)
    ? body.data.map((m) => m.id).filter((id): id is string => typeof id === "string")
    : [];
}

/** Does the server answer a 1-token request for `model`? (null: it answered, else its error text) */
async function probeModel(target: Target, model: string): Promise<string | null> {
  const r = await oneTokenRequest(target, model, 60_000);
  if (r.status === 200) return null;
  const msg = (r.json as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof msg === "string" ? msg : (r.error ?? `HTTP ${r.status}: ${(r.text ?? "").slice(0, 200)}`);
}

/** The longest prompt a sweep sends: one turn's, or a whole conversation's last turn (`--turns`). */
function conversationPromptTokens(cfg: SweepConfig, turnTokens: number): number {
  const turns = cfg.sessions?.turns ?? 1;
  return turns * turnTokens + (turns - 1) * cfg.max_tokens + (cfg.shared_prefix?.tokens ?? 0);
}

export async function preflight(
  target0: Target,
  cfg: SweepConfig,
  o: {
    readyTimeoutS: number;
    serverLimits: Record<string, string | number>;
    calibrate: boolean;
    onNotice: (m: string) => void;
    /** The Action's started server: why it is gone, or null while it runs. */
    serverExited?: () => string | null;
    /** `--trace`: its longest request (prompt and output tokens), checked against the context. */
    longest?: { promptTokens: number; outputTokens: number };
  },
): Promise<Preflight> {
  const readiness = await waitReady(target0, {
    timeoutS: o.readyTimeoutS,
    onWait: o.onNotice,
    ...(o.serverExited ? { serverExited: o.serverExited } : {}),
  });
  const server = await snapshotServer(target0, o.serverLimits);
  const served = servedModels(server);
  let target = await resolveModel(target0, served[0] ?? null);
  const model = target.model!;
  if (served.length > 0 && !served.includes(model)) {
    const refusal = await probeModel(target, model);
    if (refusal !== null) {
      throw new TokenbenchError(
        "model_not_served",
        `${rootUrl(target)} does not serve model "${model}" (it said: ${refusal.slice(0, 200)}); it serves: ${served.join(", ")}. Pass one of them to --model`,
      );
    }
    if (served.length === 1) {
      o.onNotice(
        `the server answers any model name and serves one model: "${served[0]}" is recorded as the model, not "${model}"`,
      );
      target = withModel(target, served[0]!);
    }
  }
  // A dataset's prompts are what they are: nothing to size, and their lengths are the server's count.
  const calibration =
    o.calibrate && !cfg.dataset
      ? await calibratePrompts(target, cfg.extra_body, cfg.prompt_tokens, cfg.seed)
      : null;
  if (calibration !== null) {
    o.onNotice(
      `prompts: ${calibration.words} words give ${calibration.reached_tokens} prompt tokens as the server counts them (asked ${calibration.target_tokens}; ${calibration.method}${calibration.template_overhead_tokens ? ` + ${calibration.template_overhead_tokens} template tokens` : ""})`,
    );
    if (!calibration.within_tolerance)
      o.onNotice(
        `prompt calibration reached ${calibration.reached_tokens} tokens, outside ${calibration.tolerance_rule}`,
      );
  }
  const context = server.extracted.context_length;
  if (typeof context === "number" && !cfg.dataset) {
    const prompt = o.longest
      ? o.longest.promptTokens
      : cfg.prompts === "sample"
        ? MAX_SAMPLE_PROMPT_TOKENS
        : conversationPromptTokens(cfg, calibration?.reached_tokens ?? cfg.prompt_tokens);
    const output = o.longest ? o.longest.outputTokens : cfg.max_tokens;
    if (prompt + output > context) {
      throw new TokenbenchError(
        "prompt_too_long",
        `a prompt of ${prompt} tokens plus ${output} output tokens does not fit the server's context of ${context} tokens (${rootUrl(target)}): ${o.longest ? "the trace's longest request needs a server with a longer context" : `lower ${cfg.sessions ? "--turns, " : ""}--prompt-tokens or --max-tokens, or start the server with a longer context`}`,
      );
    }
  }
  return { target, readiness, server, calibration };
}
