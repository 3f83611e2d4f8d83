// What the server says of itself (its snapshot's facts and limits).
import { describe, expect, it } from "vitest";
import { extractServerFacts } from "../../../src/core/server/snapshot.ts";
import { CONNECTION } from "../../../src/core/settings/table.ts";

describe("server facts", () => {
  it("extracts model, context, server, limits from each engine's endpoints", () => {
    expect(
      extractServerFacts(
        {
          "/v1/models": { data: [{ id: "m", max_model_len: 8192 }] },
          "/get_server_info": {
            version: "0.5",
            max_running_requests: 16,
            cuda_graph_max_bs: 8,
            context_length: 4096,
          },
        },
        null,
      ),
    ).toMatchObject({
      model_id: "m",
      server_name: "sglang",
      server_version: "0.5",
      context_length: 4096,
      max_running_requests: 16,
      cuda_graph_max_bs: 8,
    });
    expect(
      extractServerFacts(
        { "/props": { total_slots: 4, default_generation_settings: { n_ctx: 2048 }, build_info: "b1" } },
        null,
      ),
    ).toMatchObject({
      server_name: "llama.cpp",
      server_version: "b1",
      context_length: 2048,
      max_running_requests: 4,
    });
    expect(
      extractServerFacts({}, 'vllm:cache_config_info{block_size="16",num_gpu_blocks="2000"} 1'),
    ).toMatchObject({
      server_name: "vllm",
      kv_block_size: 16,
      kv_num_gpu_blocks: 2000,
    });
  });

  it("parses --server-limit", () => {
    expect(
      CONNECTION.serverLimits.parse(["max_running_requests=8", "note=fp8 kv"], "--server-limit"),
    ).toEqual({
      max_running_requests: 8,
      note: "fp8 kv",
    });
    expect(() => CONNECTION.serverLimits.parse(["oops"], "--server-limit")).toThrow(/key=value/);
  });
});
