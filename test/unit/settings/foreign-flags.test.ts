import { describe, expect, it } from "vitest";
import { parseArgv } from "../../../src/core/settings/argv.ts";
import { FOREIGN_FLAGS } from "../../../src/core/settings/foreign-flags.ts";
import { SWEEP } from "../../../src/core/settings/sweep-table.ts";
import {
  ALL_SETTINGS,
  CLI_OUTPUT,
  CONNECTION,
  LOAD,
  PROFILE,
  SWEEP_OUT,
  TOOLS,
} from "../../../src/core/settings/table.ts";
import { UsageError } from "../../../src/schema/errors.ts";

const SWEEP_TABLE = { ...CONNECTION, ...SWEEP, ...LOAD, ...CLI_OUTPUT, out: SWEEP_OUT };
const known = new Set(
  [
    ...Object.values(ALL_SETTINGS),
    ...Object.values(SWEEP),
    ...Object.values(PROFILE),
    ...Object.values(TOOLS),
  ]
    .map((s) => s.flag)
    .filter((f): f is string => f !== null),
);

function refusal(argv: string[]): string {
  try {
    parseArgv(argv, SWEEP_TABLE);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error("accepted");
}

describe("flags users bring from vLLM bench serve, AIPerf and guidellm", () => {
  it("are answered with the tokenbench flag that does that, and how it differs", () => {
    expect(refusal(["--concurrency", "8"])).toBe(
      "unknown flag --concurrency: that is AIPerf, guidellm's; here it is --levels 1,8,32 (closed loop, the default --mode: that many users each keep one request in flight; a list, one level each)",
    );
    expect(refusal(["--max-concurrency=8"])).toMatch(
      /vLLM bench serve's; here it is --levels N .*--max-in-flight N/,
    );
    expect(refusal(["--request-rate", "4"])).toMatch(/--mode open --levels R1,R2/);
    expect(refusal(["--num-prompts", "100"])).toMatch(/here it is --requests N \(per level\)/);
    expect(refusal(["--random-input-len", "512"])).toMatch(/--prompt-tokens N/);
    expect(refusal(["--random-output-len", "128"])).toMatch(/--max-tokens N/);
    expect(refusal(["--rate-type", "sweep"])).toMatch(/sweep is --mode search/);
  });

  it("no foreign flag shadows one of ours, and every answer names flags that exist", () => {
    for (const [name, f] of Object.entries(FOREIGN_FLAGS)) {
      expect(known.has(name), `--${name} is a tokenbench flag`).toBe(false);
      const named = [...f.answer.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!);
      for (const n of named) expect(known.has(n), `--${name}'s answer names --${n}`).toBe(true);
    }
  });

  it("a typo of our own flags still gets its closest match", () => {
    expect(refusal(["--levls", "1"])).toBe("unknown flag --levls (did you mean --levels?)");
  });
});
