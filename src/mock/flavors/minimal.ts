/** A server with nothing but the completion endpoints: no /health, /v1/models or /metrics. */
import { flavor } from "../flavor.ts";

export const minimal = flavor({ commonRoutes: false });
