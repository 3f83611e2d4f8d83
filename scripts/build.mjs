// Bundles the CLI (and, later, the Action) with esbuild into dist/. Deterministic output:
// CI rebuilds and fails if the committed dist/ differs.
import { build } from "esbuild";

const banner = {
  js: "import { createRequire as __tbCreateRequire } from 'node:module'; const require = __tbCreateRequire(import.meta.url);",
};

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  banner,
  legalComments: "none",
  logLevel: "warning",
  minifySyntax: true,
};

// Charting libraries (and resvg's native addon) stay external: loaded from node_modules only
// when plots are asked for.
await build({
  ...common,
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/cli.js",
  external: ["vega", "vega-lite", "@resvg/resvg-js"],
});
await build({ ...common, entryPoints: ["src/mock/index.ts"], outfile: "dist/mock.js" });
// The worker thread of `--workers N`, beside the CLI and the Action, which both start it.
await build({ ...common, entryPoints: ["src/core/load/shard-thread.ts"], outfile: "dist/shard-thread.js" });
// The DCGM exporter's reader thread of `--gpu-metrics-url`, likewise.
await build({ ...common, entryPoints: ["src/core/server/dcgm-thread.ts"], outfile: "dist/dcgm-thread.js" });
// The GitHub Action (runs.using: node24): one ESM file, minified, committed.
await build({
  ...common,
  entryPoints: ["src/action/index.ts"],
  outfile: "dist/index.js",
  target: "node24",
  minify: true,
});

// The dashboard (served by the Worker as static assets): one browser bundle, committed.
await build({
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  entryPoints: ["src/dashboard/app.ts"],
  outfile: "public/assets/app.js",
});
