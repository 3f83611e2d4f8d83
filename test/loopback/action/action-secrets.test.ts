// Secrets in the Action's logs: every secret input is registered with the runner (::add-mask::)
// at start, and the Action masks them itself in what it prints, its job summary and outputs,
// even when the server under test and the results service echo them back in their errors.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAction } from "../../../scripts/run-action.ts";
import { secretInputs } from "../../../src/action/secrets.ts";
import { echoingInferenceServer, echoingResultsService } from "../../helpers/echo-servers.ts";

const SECRETS = {
  "api-token": "tbk_service_token_123456",
  "read-token": "tbr_read_token_654321",
  "server-api-key": "sk-live-abcdef123456",
  "github-token": "ghs_test_token_777777",
};
const HEADER = "hdr-secret-9876";

describe("secretInputs: what the Action masks", () => {
  it("the four secret inputs, the credentials in headers, and their encoded forms", () => {
    const given: Record<string, string> = {
      ...SECRETS,
      headers: `X-Api-Key: ${HEADER}\nX-Trace: visible-value`,
    };
    const get = (n: string) => given[n] ?? "";
    const got = secretInputs(get);
    for (const v of [...Object.values(SECRETS), HEADER]) {
      expect(got).toContain(v);
      expect(got).toContain(Buffer.from(v).toString("base64"));
    }
    expect(got).not.toContain("visible-value");
    expect(secretInputs(() => "")).toEqual([]);
  });
  it("a URL's user and password, and a key in its query, are secrets in any input", () => {
    const given: Record<string, string> = {
      "base-url": "http://bench:pw-in-url-4321@127.0.0.1:9/v1",
      "gpu-metrics-url": "http://127.0.0.1:9400/metrics?token=dcgm-token-8765&x=visible",
    };
    const got = secretInputs((n) => given[n] ?? "");
    expect(got).toContain("pw-in-url-4321");
    expect(got).toContain("bench:pw-in-url-4321");
    expect(got).toContain(Buffer.from("bench:pw-in-url-4321").toString("base64"));
    expect(got).toContain("dcgm-token-8765");
    expect(got).not.toContain("visible");
  });
});

describe("the Action against servers that echo credentials", () => {
  let inference: Awaited<ReturnType<typeof echoingInferenceServer>>;
  let service: Awaited<ReturnType<typeof echoingResultsService>>;
  beforeAll(async () => {
    [inference, service] = await Promise.all([echoingInferenceServer(), echoingResultsService()]);
  });
  afterAll(async () => {
    await Promise.all([inference?.close(), service?.close()]);
  });

  it("no secret in the log, the summary or the outputs; each registered with the runner", {
    timeout: 90_000,
  }, async () => {
    const r = await runAction(
      {
        "base-url": inference.url,
        levels: "1",
        requests: "3",
        "max-tokens": "4",
        warmup: "0",
        "max-error-rate": "100",
        headers: `X-Api-Key: ${HEADER}`,
        "results-url": service.url,
        baseline: "",
        ...SECRETS,
      },
      {
        GITHUB_REPOSITORY: "acme/secrets",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "5".repeat(40),
        GITHUB_RUN_ID: "77",
      },
      {},
    );
    // the echoes happened, masked: the server's 500s and the service's refusal are reported
    expect(r.log).toMatch(/HTTP 500: upstream refused authorization=\*\*\* x-api-key=\*\*\*/);
    expect(r.log).toMatch(/upload to .* failed.*not accepted: authorization=Bearer \*\*\*/);
    for (const v of [...Object.values(SECRETS), HEADER])
      expect(r.log.split("\n").filter((l) => l === `::add-mask::${v}`)).toHaveLength(1);
    const outside = r.log
      .split("\n")
      .filter((l) => !l.startsWith("::add-mask::"))
      .join("\n");
    const results = readFileSync(r.outputs["results-path"]!, "utf8");
    for (const [where, text] of Object.entries({ log: outside, summary: r.summary, results, ...r.outputs }))
      for (const v of [...Object.values(SECRETS), HEADER, encodeURIComponent(SECRETS["api-token"])])
        expect(text, `${where} holds ${v}`).not.toContain(v);
  });

  it("credentials in URLs: sent as they must be, shown nowhere (log, summary, outputs, results)", {
    timeout: 90_000,
  }, async () => {
    const password = "pw-in-url-4321";
    const token = "dcgm-token-8765";
    const base = inference.url.replace("http://", `http://bench:${password}@`);
    const r = await runAction(
      {
        "base-url": base,
        levels: "1",
        requests: "3",
        "max-tokens": "4",
        warmup: "0",
        "max-error-rate": "100",
        // nothing listens there: the sampler's death is reported, with the URL shown public
        "gpu-metrics-url": `http://127.0.0.1:9/metrics?token=${token}`,
        "gpu-sample-ms": "100",
        baseline: "",
      },
      {
        GITHUB_REPOSITORY: "acme/secrets",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "6".repeat(40),
        GITHUB_RUN_ID: "78",
      },
      {},
    );
    // the server got the credentials as a Basic header (and echoed it back, masked)
    expect(r.log).toMatch(/authorization=\*\*\*/);
    const results = readFileSync(r.outputs["results-path"]!, "utf8");
    const doc = JSON.parse(results);
    expect(doc.target.base_url).toBe(inference.url.replace("http://", "http://***@").replace(/\/$/, ""));
    expect(doc.config.gpu_telemetry.metrics_url).toBe("http://127.0.0.1:9/metrics?token=***");
    const outside = r.log
      .split("\n")
      .filter((l) => !l.startsWith("::add-mask::"))
      .join("\n");
    const basic = Buffer.from(`bench:${password}`).toString("base64");
    for (const [where, text] of Object.entries({ log: outside, summary: r.summary, results, ...r.outputs }))
      for (const v of [password, token, basic]) expect(text, `${where} holds ${v}`).not.toContain(v);
  });
});

describe("text from the server under test cannot issue a workflow command", () => {
  const COMMANDS = [
    "::error file=pwned.ts::injected",
    "::add-mask::tokenbench",
    "::stop-commands::tok123",
    "::set-output name=x::y",
  ];
  const isCommand = (line: string) =>
    /^\s*::(error file=pwned|add-mask::tokenbench|stop-commands|set-output)/.test(line);

  it("its error bodies and its model id: printed, inert", { timeout: 90_000 }, async () => {
    const { rawServer } = await import("../../helpers/servers.ts");
    const body = `boom\n${COMMANDS.join("\n")}\n`;
    const server = await rawServer((req, res) => {
      req.resume();
      if (req.url === "/health") return res.writeHead(200).end("ok");
      if (req.url === "/v1/models")
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: `m\n${COMMANDS[0]}`, object: "model" }] }));
      res.writeHead(500, { "content-type": "text/plain" }).end(body);
    });
    try {
      const r = await runAction(
        {
          "base-url": server.url,
          levels: "1",
          requests: "2",
          "max-tokens": "4",
          warmup: "0",
          "calibrate-prompts": "false",
          "max-error-rate": "100",
          baseline: "",
        },
        {
          GITHUB_REPOSITORY: "acme/inert",
          GITHUB_EVENT_NAME: "push",
          GITHUB_REF: "refs/heads/main",
          GITHUB_SHA: "7".repeat(40),
          GITHUB_RUN_ID: "79",
        },
        {},
      );
      // the server's text is in the log (it is what went wrong), but no line of it is a command
      expect(r.log).toMatch(/boom/);
      expect(r.log).toMatch(/error file=pwned/);
      expect(r.log.split("\n").filter(isCommand)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("the log of its server-command, printed when it exits: inert", { timeout: 90_000 }, async () => {
    const script = COMMANDS.map((c) => `console.log(${JSON.stringify(c)})`).join(";");
    const r = await runAction(
      {
        "server-command": `node -e '${script};process.exit(3)'`,
        "base-url": "http://127.0.0.1:9",
        levels: "1",
        baseline: "",
      },
      {
        GITHUB_REPOSITORY: "acme/inert",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "8".repeat(40),
        GITHUB_RUN_ID: "80",
      },
      {},
    );
    expect(r.code).not.toBe(0);
    expect(r.log).toMatch(/stop-commands::tok123/);
    expect(r.log.split("\n").filter(isCommand)).toEqual([]);
  });
});
