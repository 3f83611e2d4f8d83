import { env } from "cloudflare:test";
import closed from "../../schema/examples/closed-sweep.json";
import profile from "../../schema/examples/profile.json";
import type { ResultDocument } from "../../src/schema/v1.ts";
import { app } from "../../src/worker/index.ts";
import { fasterBy } from "../helpers/scale.ts";

export const ADMIN = "test-admin-token";

export type TestEnv = typeof env & { OIDC_JWKS?: string; READ_TOKEN?: string; MAX_UPLOAD_BYTES?: string };

export function call(path: string, init: RequestInit = {}, e: TestEnv = env): Promise<Response> {
  return Promise.resolve(app.request(path, init, e));
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
export async function json<T = any>(res: Response | Promise<Response>): Promise<T> {
  return (await res).json() as Promise<T>;
}

let seq = 0;
/** A distinct, valid schema-v1 sweep document for `repo`. */
export function sweepDoc(
  repo: string,
  over: { branch?: string; sha?: string; createdAt?: string; scale?: number; pr?: number | null } = {},
): ResultDocument {
  const d = structuredClone(closed) as unknown as ResultDocument;
  const n = ++seq;
  d.repository = repo;
  d.created_at = over.createdAt ?? new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString();
  d.git = {
    sha: over.sha ?? `${n.toString(16).padStart(8, "0")}deadbeef`,
    ref: `refs/heads/${over.branch ?? "main"}`,
    branch: over.branch ?? "main",
    base_branch: "main",
    pr_number: over.pr ?? null,
    workflow_run_id: String(1000 + n),
    run_attempt: 1,
  };
  d.requests = null;
  if (over.scale !== undefined) for (const l of d.levels) fasterBy(l, over.scale);
  return d;
}

export function profileDoc(repo: string): ResultDocument {
  const d = structuredClone(profile) as unknown as ResultDocument;
  d.repository = repo;
  d.git = {
    sha: "abc",
    ref: null,
    branch: "main",
    base_branch: null,
    pr_number: null,
    workflow_run_id: null,
    run_attempt: null,
  };
  d.requests = null;
  return d;
}

export async function apiToken(repo: string): Promise<string> {
  const r = await json<{ token: string }>(
    call("/api/v1/admin/tokens", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ repository: repo }),
    }),
  );
  return r.token;
}

export function upload(doc: unknown, token: string, e: TestEnv = env): Promise<Response> {
  return call(
    "/api/v1/runs",
    {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: typeof doc === "string" ? doc : JSON.stringify(doc),
    },
    e,
  );
}

export async function count(table: string): Promise<number> {
  const r = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
  return r!.n;
}

// ---- OIDC -----------------------------------------------------------------------------------
const b64url = (bytes: Uint8Array | string) => {
  const s = typeof bytes === "string" ? bytes : String.fromCharCode(...bytes);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const utf8b64url = (o: unknown) =>
  b64url(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(o))));

export interface Issuer {
  kid: string;
  jwks: string;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
}

export async function makeIssuer(kid = "k1"): Promise<Issuer> {
  const pair = (await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const pub = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  return {
    kid,
    jwks: JSON.stringify({ keys: [{ kty: "RSA", n: pub.n, e: pub.e, kid, alg: "RS256", use: "sig" }] }),
    async sign(claims, header = {}) {
      const h = utf8b64url({ alg: "RS256", typ: "JWT", kid, ...header });
      const p = utf8b64url(claims);
      const sig = new Uint8Array(
        await crypto.subtle.sign("RSASSA-PKCS1-v1_5", pair.privateKey, new TextEncoder().encode(`${h}.${p}`)),
      );
      return `${h}.${p}.${b64url(sig)}`;
    },
  };
}

let jtiSeq = 0;
export function claims(repo: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: "https://token.actions.githubusercontent.com",
    aud: "tokenbench",
    iat: now - 5,
    nbf: now - 5,
    exp: now + 300,
    jti: `jti-${++jtiSeq}-${Math.random()}`,
    repository: repo,
    ref: "refs/heads/main",
    sha: "abc",
    ...over,
  };
}

export { b64url, utf8b64url };
