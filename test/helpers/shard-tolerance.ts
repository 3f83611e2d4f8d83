/** The merge's clock tolerance a test's shards allow, from their own records (shards.ts's tests, the Action's). */
import type { ResultDocument } from "../../src/schema/v1.ts";

/**
 * The merge's clock tolerance these shards' own records allow: its 50 ms, plus how late each said
 * it started a level after its slot (its notice) and its event loop's longest stall. Two runners
 * on a machine busy enough to wake hundreds of ms late start their levels that far apart.
 */
export function toleranceFor(...shards: { doc: ResultDocument }[]): string {
  const late = (d: ResultDocument) =>
    Math.max(
      0,
      ...d.levels.flatMap((l) =>
        l.notices.map((n) => Number(/started (\d+) ms after its slot/.exec(n)?.[1] ?? 0)),
      ),
    );
  const stall = (d: ResultDocument) =>
    Math.max(0, ...d.levels.map((l) => l.client.event_loop_delay_ms.max ?? 0));
  return String(Math.ceil(50 + shards.reduce((a, s) => a + late(s.doc) + stall(s.doc), 0)));
}
