/**
 * Whose lateness the self-check reports (#10): a loop kept busy by the client's own work is
 * blamed on the client; a process that is idle but woken late (stopped and resumed from outside,
 * as a busy host or a VM does) gets a timing note instead, not a bottleneck warning.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { SELF_CHECK_LIMITS, SelfCheck } from "../../../src/core/load/self-check.ts";
import type { LevelResult } from "../../../src/schema/v1.ts";

const CHILD = resolve(import.meta.dirname, "../../helpers/self-check-child.ts");
const spin = (ms: number) => {
  const t = performance.now();
  while (performance.now() - t < ms) {}
};

describe("self-check: whose lateness", () => {
  it("a loop busy with the client's own work is blamed on the client", async () => {
    const check = new SelfCheck();
    check.start();
    // 15 ms of synchronous work every 30 ms for 1.5 s: half the time busy, in 15 ms stretches.
    const t0 = performance.now();
    while (performance.now() - t0 < 1500) {
      spin(15);
      await new Promise((r) => setTimeout(r, 15));
    }
    const v = check.stop();
    expect(v.own_delay_ms!.p99).toBeGreaterThan(5);
    expect(v.bottleneck_warning).toMatch(/the client may be the bottleneck/);
    expect(v.timing_note).toBeNull();
    expect(v.lateness_bound_ms).toBeGreaterThanOrEqual(15);
  });

  it("an idle process woken late gets a timing note, not a bottleneck warning", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, "2.5"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await new Promise<void>((res) => {
      const wait = () => (out.includes("started") ? res() : setTimeout(wait, 10));
      wait();
    });
    // Stopped 25 ms of every 75 ms for 2 s: the loop waits in its poll, and wakes 25 ms late.
    const t0 = performance.now();
    while (performance.now() - t0 < 2000) {
      child.kill("SIGSTOP");
      await new Promise((r) => setTimeout(r, 25));
      child.kill("SIGCONT");
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => child.once("exit", r));
    const v = JSON.parse(out.trim().split("\n").pop()!) as LevelResult["client"];
    expect(v.event_loop_delay_ms.p99).toBeGreaterThan(10);
    // its own work alone makes it no later than the limit a warning starts from
    expect(v.own_delay_ms!.p99).toBeLessThanOrEqual(SELF_CHECK_LIMITS.lateMs);
    expect(v.bottleneck_warning).toBeNull();
    expect(v.timing_note).toMatch(/timing noise: .* the machine woke it late/);
    expect(v.lateness_bound_ms).toBeGreaterThanOrEqual(20);
  });
});
