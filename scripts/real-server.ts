// `npm run real-server`: build (once, cached) and run llama.cpp's llama-server with a tiny
// random-weight model on 127.0.0.1, for trying tokenbench against a real server.
//   npm run real-server                 build if needed, then serve on port 8080 until Ctrl-C
//   npm run real-server -- --build-only build and write the model, print their paths
//   npm run real-server -- --port 9000 --slots 4
import { parseArgs } from "node:util";
import { ensureLlamaServer, ensureModel, MODEL_ALIAS, startRealServer } from "./real-server/index.ts";

const { values } = parseArgs({
  options: { "build-only": { type: "boolean" }, port: { type: "string" }, slots: { type: "string" } },
});
const bin = await ensureLlamaServer();
const model = ensureModel();
if (values["build-only"]) {
  console.log(`llama-server: ${bin}\nmodel: ${model}`);
} else {
  const s = await startRealServer({ port: Number(values.port ?? 8080), slots: Number(values.slots ?? 4) });
  const slots = s.slots === null ? "slots unknown (no /props)" : `${s.slots} slot${s.slots === 1 ? "" : "s"}`;
  console.log(`llama-server (${MODEL_ALIAS}, ${slots}, ${s.threads} thread${s.threads === 1 ? "" : "s"}) at ${s.url}
  npx tokenbench sweep --base-url ${s.url} --levels 1,2,4,8 --requests 32 --max-tokens 64
  npx tokenbench profile --base-url ${s.url} --targets 128,512 --decode-tokens 64
Ctrl-C stops it.`);
  const stop = () => void s.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
