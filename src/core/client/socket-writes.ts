/** When each request really went out: undici's diagnostics channels, keyed by a request id header. */
import diagnostics from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";

/**
 * "Actual send" is when undici writes the request's headers to the socket, not when we hand the
 * request to undici: between the two the request can wait for a connection or for a busy event
 * loop, and that wait is the client's, not the server's. undici announces each write on the
 * `undici:client:sendHeaders` diagnostics channel; the request id header ties it to its record.
 */
export const REQUEST_ID_HEADER = "x-tokenbench-request-id";
/** Per request id: when its headers were written, and whether the socket had carried a request before. */
export const socketWrites = new Map<string, { t: number; reused: boolean; connectedAt: number | null }>();
const socketUses = new WeakMap<object, number>();
const socketConnected = new WeakMap<object, number>();
let sendHeadersSubscribed = false;
export function watchSocketWrites(): void {
  if (sendHeadersSubscribed) return;
  sendHeadersSubscribed = true;
  diagnostics.subscribe("undici:client:connected", (msg) => {
    const socket = (msg as { socket?: object }).socket;
    if (socket) socketConnected.set(socket, performance.now());
  });
  diagnostics.subscribe("undici:client:sendHeaders", (msg) => {
    const t = performance.now();
    const { headers, socket } = msg as { headers?: string; socket?: object };
    if (typeof headers !== "string") return;
    const i = headers.indexOf(`${REQUEST_ID_HEADER}: `);
    if (i === -1) return;
    const start = i + REQUEST_ID_HEADER.length + 2;
    const end = headers.indexOf("\r\n", start);
    const uses = socket ? (socketUses.get(socket) ?? 0) : 0;
    if (socket) socketUses.set(socket, uses + 1);
    const connectedAt = socket !== undefined && uses === 0 ? (socketConnected.get(socket) ?? null) : null;
    socketWrites.set(headers.slice(start, end === -1 ? undefined : end), {
      t,
      reused: uses > 0,
      connectedAt,
    });
  });
}
