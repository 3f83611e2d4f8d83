// Against llama.cpp's llama-server: agents' sessions (`--agent-sessions`) through a recording
// proxy (every call re-sends its context verbatim: the earlier call's messages, then the answer
// exactly as the server streamed it; cached tokens are the server's own cache_n), and the
// server's start when tokenbench starts it (`--server-command`), cold and warm.
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureLlamaServer,
  ensureModel,
  MODEL_ALIAS,
  type RealServer,
  startRealServer,
} from "../../scripts/real-server/index.ts";
import { parseResultDocument, type RequestRecord } from "../../src/schema/v1.ts";
import { runCli } from "../helpers/cli.ts";

const EXAMPLE = resolve(import.meta.dirname, "../../examples/agent-sessions.jsonl");
const tmp = mkdtempSync(join(tmpdir(), "tokenbench-agents-"));
type Message = { role: string; content: string };
interface Exchange {
  requestId: string;
  messages: Message[];
  /** The answer's text as the server streamed it (its deltas joined). */
  answer: string;
}
let server: RealServer;
let proxy: Server;
let proxyUrl = "";
const exchanges: Exchange[] = [];

/** The content deltas of a chat completions stream, joined. */
function streamedText(raw: string): string {
  let text = "";
  for (const line of raw.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    try {
      text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
    } catch {}
  }
  return text;
}

beforeAll(async () => {
  server = await startRealServer({ slots: 4 });
  const target = new URL(server.url);
  // Forwards everything; records each chat completion's messages and the answer it streamed.
  proxy = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (d: Buffer) => body.push(d));
    req.on("end", () => {
      const up = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          const got: Buffer[] = [];
          ur.on("data", (d: Buffer) => {
            got.push(d);
            res.write(d);
          });
          // recorded once the upstream answer is over, whether it ended or its socket closed first
          let over = false;
          const finish = () => {
            if (over) return;
            over = true;
            res.end();
            if (req.url !== "/v1/chat/completions") return;
            const sent = JSON.parse(Buffer.concat(body).toString("utf8")) as { messages: Message[] };
            exchanges.push({
              requestId: String(req.headers["x-tokenbench-request-id"] ?? ""),
              messages: sent.messages,
              answer: streamedText(Buffer.concat(got).toString("utf8")),
            });
          };
          ur.on("end", finish);
          ur.on("close", finish);
        },
      );
      up.on("error", () => res.destroy());
      up.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const a = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
}, 120_000);
afterAll(() => {
  proxy?.close();
  server?.stop();
});

describe("agents' sessions against llama.cpp", () => {
  it("every call re-sends its context verbatim, answers as streamed; cached tokens are the server's cache_n and cover the context", async () => {
    const out = join(tmp, "agents.json");
    // one user: the two sessions in turn, 12 calls (7 with the subagents', then 5)
    const r = await runCli(
      [
        ...`sweep --agent-sessions ${EXAMPLE} --levels 1 --requests 12 --warmup 0 --metrics-interval-ms 0 --records inline --seed 5`.split(
          " ",
        ),
        "--base-url",
        proxyUrl,
        "--out",
        out,
      ],
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const d = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    const rs = d.requests!.filter((x) => !x.warmup);
    expect(rs).toHaveLength(12);
    expect(rs.every((x) => x.error === null)).toBe(true);
    expect(d.levels[0]!.jobs!.complete).toBe(2);
    // "<client>-<id>", and "-r<n>" on a resend (a kept-alive connection found closed): the last one answered
    // (the preflight's probes carry none)
    const measured = exchanges.filter((e) => /-\d+(?:-r\d+)?$/.test(e.requestId));
    const idOf = (e: Exchange) => Number(/-(\d+)(?:-r\d+)?$/.exec(e.requestId)![1]);
    const byId = new Map(measured.map((e) => [idOf(e), e]));
    let checked = 0;
    for (const x of rs) {
      expect(x.usage!.cached_tokens, `call ${x.turn} of job ${x.session}`).toBe(x.server_timings?.cache_n);
      const e = byId.get(x.id)!;
      expect(e, `request ${x.id} went through the proxy`).toBeDefined();
      const history = e.messages.slice(0, -1);
      if (history.length < 3) continue; // a context's first call, or the one after a compaction
      // the earlier call of this context was sent as this history's prefix, and its answer follows
      // exactly as the server streamed it
      const earlier = [...byId.values()].find(
        (o) => JSON.stringify(o.messages) === JSON.stringify(history.slice(0, -1)),
      );
      expect(
        earlier,
        `call ${x.turn} of job ${x.session}: its history's prefix was sent before`,
      ).toBeDefined();
      expect(history[history.length - 1]).toEqual({ role: "assistant", content: earlier!.answer });
      expect(earlier!.answer.length).toBeGreaterThan(0);
      checked++;
    }
    // calls 2, 6, 7 of the first session and its explorer's second; calls 2, 3, 5 of the second
    expect(checked).toBe(7);
    // the second session (one context, a compaction at its fourth call): each call finds the
    // context so far in the server's cache; the compacted call only the system prompt
    const edit = rs.filter((x) => x.job_calls === 5).sort((a, b) => a.turn! - b.turn!);
    const prompt = (x: RequestRecord) => x.usage!.prompt_tokens!;
    expect(edit.map((x) => x.turn)).toEqual([1, 2, 3, 4, 5]);
    for (const k of [1, 2, 4])
      expect(edit[k]!.usage!.cached_tokens!, `call ${k + 1}`).toBeGreaterThanOrEqual(
        0.9 * prompt(edit[k - 1]!),
      );
    expect(prompt(edit[3]!)).toBeLessThan(prompt(edit[2]!));
    expect(edit[3]!.usage!.cached_tokens!).toBeLessThan(prompt(edit[3]!) - 50);
    expect(d.levels[0]!.jobs!.cached_tokens_pct!).toBeGreaterThan(40);
  }, 300_000);
});

describe("llama.cpp's start, measured (--server-command --startup both)", () => {
  it("cold and warm: its load phases from its own log, ready, then a first token; the server stopped after", async () => {
    const bin = await ensureLlamaServer();
    const model = ensureModel();
    const port = 18_000 + Math.floor(Math.random() * 2000);
    const out = join(tmp, "startup.json");
    const command = `exec ${bin} -m ${model} --alias ${MODEL_ALIAS} -t 1 -tb 1 --host 127.0.0.1 --port ${port} -np 2 -c 4096 --no-webui`;
    const r = await runCli(
      [
        ...`sweep --levels 1 --requests 4 --max-tokens 8 --warmup 0 --metrics-interval-ms 0 --startup both --out ${out}`.split(
          " ",
        ),
        "--base-url",
        `http://127.0.0.1:${port}`,
        "--server-command",
        command,
      ],
      { timeoutMs: 180_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const d = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    for (const s of [d.startup!, d.startup!.warm!]) {
      const phases = s.phases!.map((p) => p.phase);
      // the lines llama-server prints as it loads, in the order it prints them
      expect(phases).toEqual(["loading model", "slots and KV cache sized", "model loaded", "listening"]);
      const at = (name: string) => s.phases!.find((p) => p.phase === name)!.at_s;
      expect(at("model loaded")).toBeGreaterThanOrEqual(at("loading model"));
      // ready after the model loaded (its /health says 503 until then), a first token after ready
      expect(s.ready_s).toBeGreaterThanOrEqual(at("model loaded") - 0.06);
      expect(s.first_token_s!).toBeGreaterThan(s.ready_s);
    }
    expect(d.levels[0]!.ok).toBe(4);
    const gone = await fetch(`http://127.0.0.1:${port}/health`).then(
      () => false,
      () => true,
    );
    expect(gone).toBe(true);
  }, 240_000);
});
