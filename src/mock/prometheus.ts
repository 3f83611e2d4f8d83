/** Minimal Prometheus text exposition (format 0.0.4): counters, gauges and histograms. */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = new Array(buckets.length).fill(0);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) this.counts[i]!++;
  }
}

const fmtLabels = (labels: Record<string, string>): string => {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`,
  );
  return parts.length ? `{${parts.join(",")}}` : "";
};

export class Exposition {
  private lines: string[] = [];
  constructor(private readonly labels: Record<string, string>) {}

  metric(
    name: string,
    type: "counter" | "gauge",
    help: string,
    value: number,
    extra: Record<string, string> = {},
  ): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    this.lines.push(`${name}${fmtLabels({ ...this.labels, ...extra })} ${value}`);
  }

  series(
    name: string,
    type: "counter" | "gauge",
    help: string,
    values: [Record<string, string>, number][],
  ): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [l, v] of values) this.lines.push(`${name}${fmtLabels({ ...this.labels, ...l })} ${v}`);
  }

  histogram(name: string, help: string, h: Histogram): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (let i = 0; i < h.buckets.length; i++) {
      this.lines.push(
        `${name}_bucket${fmtLabels({ ...this.labels, le: String(h.buckets[i]) })} ${h.counts[i]}`,
      );
    }
    this.lines.push(`${name}_bucket${fmtLabels({ ...this.labels, le: "+Inf" })} ${h.count}`);
    this.lines.push(`${name}_sum${fmtLabels(this.labels)} ${h.sum}`);
    this.lines.push(`${name}_count${fmtLabels(this.labels)} ${h.count}`);
  }

  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

export const LATENCY_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
] as const;
export const ITL_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1,
] as const;
