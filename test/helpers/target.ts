import { type Preflight, preflight } from "../../src/core/server/preflight.ts";
import { snapshotServer } from "../../src/core/server/snapshot.ts";
import {
  makeTarget,
  type ResolvedTarget,
  type Target,
  type TargetOptions,
} from "../../src/core/server/target.ts";

/** The mock's default target: chat API, model `mock-model`, no key (`model: null`: to be discovered). */
export function tgt(baseUrl: string, over: Partial<TargetOptions> & { model: null }): Target;
export function tgt(baseUrl: string, over?: Partial<TargetOptions> & { model?: string }): ResolvedTarget;
export function tgt(baseUrl: string, over: Partial<TargetOptions> = {}): Target {
  return makeTarget({ baseUrl, api: "chat", model: "mock-model", apiKey: null, headers: {}, ...over });
}

/**
 * The preflight a run gets, without prompt calibration (one word per token), for tests that call
 * runSweep or runProfile directly: readiness, the snapshot and the model check.
 */
export function contact(
  baseUrl: string,
  over: Partial<TargetOptions> & { serverLimits?: Record<string, string | number> } = {},
): Promise<Preflight> {
  const { serverLimits, ...target } = over;
  return preflight(
    makeTarget({ baseUrl, api: "chat", model: "mock-model", apiKey: null, headers: {}, ...target }),
    null,
    {
      readyTimeoutS: 10,
      serverLimits: serverLimits ?? {},
      calibrate: false,
      onNotice: () => {},
    },
  );
}

/**
 * What runSweep is handed for a server that is not contacted first (an unreachable one): the
 * snapshot alone, no readiness wait, no model check.
 */
export async function withoutContact(baseUrl: string): Promise<Preflight> {
  const target = tgt(baseUrl);
  return {
    target,
    readiness: { ready: false, waited_s: 0, probes: [] },
    server: await snapshotServer(target, {}),
    calibration: null,
  };
}
