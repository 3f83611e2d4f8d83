// Regenerates schema/examples/*.json from real runs against the mock (run by hand: the examples
// are committed so readers see real documents; tests validate them against schema v1).

import { writeFileSync } from "node:fs";
import { defaultProfileConfig, runProfile } from "../src/core/profile/profile.ts";
import { preflight } from "../src/core/server/preflight.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { defaultSweepConfig } from "../src/core/sweep/config.ts";
import { runSweep } from "../src/core/sweep/sweep.ts";
import { start } from "../src/mock/index.ts";
import type { SweepConfig } from "../src/schema/v1.ts";

const mock = await start({ ttftMs: 30, itlMs: 5, capacity: 2 });
const base: SweepConfig = defaultSweepConfig({
  levels: [1, 4],
  requests_per_level: 4,
  warmup_requests: 1,
  prompt_tokens: 32,
  max_tokens: 4,
  timeout_s: 30,
  slo: { ttft_ms: 100, tpot_ms: 20, e2e_ms: null },
  metrics_interval_ms: 100,
});
// As the CLI makes first contact, without prompt calibration (one word per token).
const contact = (baseUrl: string, model: string | null, serverLimits: Record<string, number> = {}) =>
  preflight(makeTarget({ baseUrl, api: "chat", model, apiKey: null, headers: {} }), null, {
    readyTimeoutS: 10,
    serverLimits,
    calibrate: false,
    onNotice: () => {},
  });
const conn = {
  pre: await contact(mock.url, "mock-model"),
  records: "inline" as const,
  resume: false,
};
await runSweep({ ...conn, config: base, out: "schema/examples/closed-sweep.json" });
await runSweep({
  ...conn,
  config: { ...base, mode: "open", levels: [5, 20], requests_per_level: 6, warmup_requests: 0 },
  out: "schema/examples/open-sweep.json",
});
await mock.close();

const ft = await start({ flavor: "freetoken", ttftMs: 20, prefillMsPer1k: 30, itlMs: 4 });
const profile = await runProfile({
  pre: await contact(ft.url, null, { cuda_graph_max_bs: 32 }),
  timeoutS: 30,
  config: defaultProfileConfig({
    targets: [128, 512],
    repetitions: 2,
    decode_tokens: 16,
    suffix_tokens: 16,
    ready_timeout_s: 10,
  }),
});
writeFileSync("schema/examples/profile.json", `${JSON.stringify(profile, null, 1)}\n`);
await ft.close();
