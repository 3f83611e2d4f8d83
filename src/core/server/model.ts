/**
 * Which model a run asks for: the one given, else the first the server lists; the ids the server
 * serves, and whether it answers a name it does not list. The preflight's model check is built
 * from these.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { ServerSnapshot } from "../../schema/v1.ts";
import { httpCall, oneTokenRequest } from "./http.ts";
import { type ResolvedTarget, rootUrl, type Target, url, withModel } from "./target.ts";

/** First model id from `/v1/models`, or null. */
export async function discoverModel(target: Target): Promise<string | null> {
  const r = await httpCall(url(target, "/v1/models"), { headers: { ...target.headers }, timeoutMs: 10_000 });
  const data = (r.json as { data?: { id?: unknown }[] } | null)?.data;
  const id = Array.isArray(data) ? data[0]?.id : undefined;
  return typeof id === "string" ? id : null;
}

/**
 * The target with its model: as given, else the first entry of /v1/models. The one place a
 * missing model becomes an error (`model_unknown`), for the sweep, the profile and the Action.
 */
export async function resolveModel(target: Target, discovered?: string | null): Promise<ResolvedTarget> {
  if (target.model !== null) return withModel(target, target.model);
  const m = discovered ?? (await discoverModel(target));
  if (m === null || m === undefined) {
    throw new TokenbenchError(
      "model_unknown",
      `no model given and ${rootUrl(target)}/v1/models did not name one: pass --model (Action input "model")`,
    );
  }
  return withModel(target, m);
}

/** Model ids the server lists at /v1/models (from the snapshot). */
export function servedModels(server: ServerSnapshot): string[] {
  const body = server.endpoints["/v1/models"]?.body as { data?: { id?: unknown }[] } | undefined;
  return Array.isArray(body?.data)
    ? body.data.map((m) => m.id).filter((id): id is string => typeof id === "string")
    : [];
}

/** Does the server answer a 1-token request for `model`? (null: it answered, else its error text) */
export async function probeModel(target: Target, model: string): Promise<string | null> {
  const r = await oneTokenRequest(target, model, 60_000);
  if (r.status === 200) return null;
  const msg = (r.json as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof msg === "string" ? msg : (r.error ?? `HTTP ${r.status}: ${(r.text ?? "").slice(0, 200)}`);
}
