// Shared bench helpers: a mock server in its own process (so client and server do not share an
// event loop), percentiles, and the one-JSON-line convention.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { quantile } from "../src/shared/statistics.ts";

export const ROOT = resolve(import.meta.dirname, "..");

export interface Child {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Start `tokenbench mockserver` (dist build) on a free port in a child process. */
export function spawnMock(args: string[], o: { nice?: number; cpu?: number } = {}): Promise<Child> {
  return new Promise((res, rej) => {
    let argv = [process.execPath, resolve(ROOT, "bin/tokenbench.js"), "mockserver", "--port", "0", ...args];
    // The mock stands in for a server on another machine: `nice` lowers its priority so it does
    // not take the client's core when the client's timer is due; `cpu` pins it to one core.
    if (o.nice) argv = ["nice", "-n", String(o.nice), ...argv];
    if (o.cpu !== undefined) argv = ["taskset", "-c", String(o.cpu), ...argv];
    const proc = spawn(argv[0]!, argv.slice(1), {
      stdio: ["ignore", "inherit", "pipe"],
    });
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+): /.exec(err);
      if (m) {
        proc.stderr!.removeAllListeners("data");
        res({
          url: m[1]!,
          proc,
          stop: () =>
            new Promise((r) => {
              proc.once("exit", () => r());
              proc.kill("SIGTERM");
            }),
        });
      }
    });
    proc.once("exit", (code) => rej(new Error(`mock exited ${code}: ${err}`)));
  });
}

/** Percentiles in the benches: the project's one method (type 7). */
export const pct = quantile;

export const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

export function verdict(ok: boolean): string {
  return ok ? "PASS" : "MISS";
}

/** A raw HTTP/1.1 streaming chat request, for the benches' independent socket readers. */
export function rawChatRequest(maxTokens: number, opts: { close?: boolean } = {}): string {
  const body = JSON.stringify({
    model: "mock-model",
    messages: [{ role: "user", content: "bench" }],
    max_tokens: maxTokens,
    ignore_eos: true,
    stream: true,
  });
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\n${opts.close ? "Connection: close\r\n" : ""}\r\n${body}`
  );
}
