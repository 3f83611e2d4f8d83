/** A server with nothing but the completion endpoints: no /health, /v1/models or /metrics. */
import { type FlavorModule, noRoutes, plainHealth, standardLastEvents } from "../flavor.ts";

export const minimal: FlavorModule = {
  commonRoutes: false,
  roleChunkAtAdmission: false,
  omitCachedDetailsWhenZero: false,
  closeAfterStream: false,
  streamHeaders: {},
  metricLabels: (o) => ({ model_name: o.model }),
  health: plainHealth,
  get: noRoutes,
  post: noRoutes,
  lastEvents: standardLastEvents,
  metrics: () => {},
};
