import { describe, expect, it } from "vitest";
import { ACTION_INPUTS, readInputs } from "../../../src/action/inputs.ts";
import { planLevel } from "../../../src/core/load/level-plan.ts";
import { didYouMean, helpText, parseArgv } from "../../../src/core/settings/argv.ts";
import { inputSource, readSettings } from "../../../src/core/settings/setting.ts";
import { SWEEP } from "../../../src/core/settings/sweep-table.ts";
import { CLI_OUTPUT, CONNECTION } from "../../../src/core/settings/table.ts";
import { sweepConfigOf } from "../../../src/core/sweep/config.ts";
import { UsageError } from "../../../src/schema/errors.ts";

const TABLE = { ...CONNECTION, ...SWEEP, ...CLI_OUTPUT };
const cli = (...argv: string[]) => {
  const p = parseArgv(argv, TABLE);
  return { ...p, values: readSettings(TABLE, p.source) };
};
const usage = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error("expected a usage error");
};

describe("one settings table, parsed as users expect", () => {
  it("values: --flag value, --flag=value, negative numbers, repeatable flags, last one wins", () => {
    const v = cli(
      "--seed",
      "-5",
      "--levels=1,2",
      "--header",
      "X-A: 1",
      "--header",
      "x-b: 2",
      "--seed",
      "-7",
    ).values;
    expect(v.seed).toBe(-7);
    expect(v.levels).toEqual([1, 2]);
    expect(v.headers).toEqual({ "x-a": "1", "x-b": "2" });
  });

  it("switches: alone, =false, or followed by a boolean word; on/off accepted like the Action", () => {
    expect(cli("--plots").values.plots).toBe(true);
    expect(cli("--plots=false").values.plots).toBe(false);
    expect(cli("--ignore-eos", "off").values.ignoreEos).toBe(false);
    expect(cli("--ignore-eos", "on", "--resume").values).toMatchObject({ ignoreEos: true, resume: true });
    const get = (m: Record<string, string>) => (n: string) => m[n] ?? "";
    expect(readInputs(get({ "base-url": "http://a", "ignore-eos": "on" })).sweep.ignore_eos).toBe(true);
  });

  it("mistakes are usage errors that say what is wrong", () => {
    expect(usage(() => cli("--levle", "3"))).toBe("unknown flag --levle (did you mean --levels?)");
    expect(usage(() => cli("--levels", ""))).toMatch(/--levels needs a value/);
    expect(usage(() => cli("--levels", "1,,2"))).toMatch(/comma-separated list/);
    expect(usage(() => cli("--mode", "sideways"))).toMatch(/must be one of closed, open/);
    expect(usage(() => cli("--header", "bad\u0000: x"))).toMatch(/invalid header/);
    // A secret in a header is never echoed back, whatever is wrong with it.
    const secret = "sk-live-0123456789abcdef";
    for (const bad of [`Bearer ${secret}`, `authorization: ${secret}\rx-injected: 1`, `x\r: ${secret}`]) {
      const msg = usage(() => cli("--header", bad));
      expect(msg).toMatch(/--header/);
      expect(msg).not.toContain(secret);
    }
    expect(usage(() => cli("--timeout-s"))).toMatch(/needs a value/);
    expect(usage(() => cli("-x"))).toMatch(/flags are spelled --name/);
    expect(didYouMean("max-token", ["max-tokens", "mode"])).toBe("max-tokens");
    expect(didYouMean("zzz", ["max-tokens", "mode"])).toBeNull();
  });

  it("defaults come from the table alone; mode-dependent levels and requests", () => {
    const v = cli().values;
    const closed = sweepConfigOf(v, v);
    expect(closed).toMatchObject({ levels: [1, 2, 4, 8], requests_per_level: 64, warmup_requests: 2 });
    const open = cli("--mode", "open", "--duration", "10").values;
    expect(sweepConfigOf(open, open)).toMatchObject({ levels: [1, 2, 4], requests_per_level: null });
    const action = readInputs((n) => (n === "base-url" ? "http://a" : ""));
    expect(action.sweep).toEqual(closed);
    expect(action.readyTimeoutS).toBe(v.readyTimeoutS);
  });

  it("the default count adds 2 per user in closed loop (at least 4 each); a count given is only raised to 2 each", () => {
    const count = (...argv: string[]) => {
      const v = cli(...argv).values;
      const cfg = sweepConfigOf(v, v);
      return cfg.levels.map((_, i) => planLevel(cfg, i));
    };
    const byDefault = count("--levels", "1,8,32");
    expect(byDefault.map((p) => p.requests)).toEqual([66, 80, 128]);
    expect(byDefault.flatMap((p) => p.notices)).toEqual([]);
    // 64 given is 64, not the default's 66
    expect(count("--levels", "1,8", "--requests", "64").map((p) => p.requests)).toEqual([64, 64]);
    const raised = count("--levels", "1,8", "--requests", "5");
    expect(raised.map((p) => p.requests)).toEqual([5, 16]);
    expect(raised[1]!.notices[0]).toMatch(/raised --requests from 5 to 16/);
    // open loop: the count as it is
    expect(count("--mode", "open", "--levels", "1,8").map((p) => p.requests)).toEqual([64, 64]);
  });

  it("--help lists every flag of the table with its default; the Action reads every input", () => {
    const help = helpText("intro", [{ title: "All", settings: Object.values(TABLE) }]);
    for (const s of Object.values(TABLE)) expect(help).toContain(`--${s.flag}`);
    expect(help).toMatch(/--timeout-s S +per-request timeout in seconds \(default 300\)/);
    const seen: string[] = [];
    readSettings(
      ACTION_INPUTS,
      inputSource((n) => {
        seen.push(n);
        return "";
      }),
    );
    const inputs = Object.values(ACTION_INPUTS).filter((s) => s.input !== null);
    expect(new Set(seen)).toEqual(new Set(inputs.map((s) => s.input)));
  });
});
