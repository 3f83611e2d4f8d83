/**
 * The combinations a sweep refuses, checked before anything opens (no server started or contacted,
 * no GPU tool, no socket): a usage error (exit 2) naming the flag and why.
 */
import { UsageError } from "../../schema/errors.ts";
import type { SweepConfig } from "../../schema/v1.ts";
import type { LoadGenerator } from "../load/load-generator.ts";

export function checkCombination(
  cfg: SweepConfig,
  load: LoadGenerator,
  o: { resume: boolean; ab: boolean; serverCommand?: boolean },
): void {
  const repeats = cfg.repeats ?? 1;
  const no = (msg: string, flag: string): never => {
    throw new UsageError(msg, flag);
  };
  if (repeats > 1 && o.resume)
    no("--resume cannot finish a sweep with --repeats: run it again whole", "--resume");
  if (repeats > 1 && load.shard !== null)
    no(
      "--repeats with --shard: the runners' start slots are per level; run the repeats as separate jobs",
      "--repeats",
    );
  if (cfg.cache_reset?.mode === "level" && load.shard !== null)
    no(
      "--cache-reset level with --shard: each runner would empty the cache while the others warm it up; use --cache-reset sweep, or one runner",
      "--cache-reset",
    );
  if (cfg.endpoints && o.serverCommand)
    no(
      "--server-command with several --base-url servers: tokenbench starts one server; start the replicas yourself, or measure the one it starts",
      "--server-command",
    );
  if (cfg.endpoints && o.ab)
    no(
      "--ab-base-url with several --base-url servers: an A/B pair compares one server with one; measure the replicas in a sweep of their own",
      "--ab-base-url",
    );
  if (!o.ab) return;
  if (cfg.search)
    no(
      "--ab-base-url with --mode search: a search decides its levels as it goes, A/B needs the same levels on both servers",
      "--ab-base-url",
    );
  if (repeats > 1)
    no("--ab-base-url with --repeats: the A/B pairs are the repeats (--ab-pairs)", "--repeats");
  if (o.resume) no("--resume cannot finish an --ab-base-url sweep: run it again whole", "--resume");
  if (load.shard !== null)
    no(
      "--ab-base-url with --shard: the pairs of one job alternate on one runner; run the A/B job unsharded",
      "--ab-base-url",
    );
}
