/**
 * The frontier as a plain SVG image: the head's curve in colour, the base's newest run grey and
 * the base branch's earlier runs fainter behind, each level a point on its curve. For places that
 * can only show an image by its address (the pull-request comment, the job summary): the service
 * draws it (GET /api/v1/runs/{id}/frontier.svg) and the Action keeps it with the results. Drawn
 * here rather than by the charting library the report uses, which would add about a megabyte to
 * the service's bundle for one picture. Pure.
 */
import { maxOf } from "./extremes.ts";
import type { Frontier } from "./frontier.ts";

export interface FrontierCurve {
  label: string;
  frontier: Frontier;
}

const W = 640;
const H = 360;
const PAD = { left: 64, right: 16, top: 40, bottom: 48 };
const HEAD = "#1f77b4";
const BASE = "#888";

const esc = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
const num = (v: number) => (v >= 1000 ? v.toFixed(0) : v >= 10 ? v.toFixed(0) : v.toPrecision(2));

/** Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, about `n` of them. */
export function ticks(lo: number, hi: number, n = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * The chart: `head` (the run) in colour, `bases` newest first (the first grey, the rest faint).
 * Throughput per GPU only when every curve counted its GPUs.
 */
export function frontierSvg(head: FrontierCurve, bases: readonly FrontierCurve[] = []): string {
  const curves = [...bases].reverse().concat(head);
  const perGpu = curves.every((c) => c.frontier.gpus !== null);
  const yOf = (p: Frontier["points"][number]) => (perGpu ? p.output_tok_s_per_gpu! : p.output_tok_s);
  const all = curves.flatMap((c) => c.frontier.points);
  const xt = ticks(0, maxOf(all.map((p) => p.tok_s_per_user)) * 1.05);
  const yt = ticks(0, maxOf(all.map(yOf)) * 1.08);
  const xMax = xt[xt.length - 1]!;
  const yMax = yt[yt.length - 1]!;
  const sx = (v: number) => PAD.left + (v / xMax) * (W - PAD.left - PAD.right);
  const sy = (v: number) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${PAD.left}" y="18" font-size="13" font-weight="bold">Frontier: throughput against speed per user</text>`,
    `<text x="${PAD.left}" y="32" fill="#555">lines: each run's Pareto levels; points: every level, labelled with it</text>`,
  ];
  for (const v of xt)
    parts.push(
      `<line x1="${sx(v)}" x2="${sx(v)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#eee"/>`,
      `<text x="${sx(v)}" y="${H - PAD.bottom + 14}" text-anchor="middle">${num(v)}</text>`,
    );
  for (const v of yt)
    parts.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${sy(v)}" y2="${sy(v)}" stroke="#eee"/>`,
      `<text x="${PAD.left - 6}" y="${sy(v) + 4}" text-anchor="end">${num(v)}</text>`,
    );
  parts.push(
    `<text x="${(PAD.left + W - PAD.right) / 2}" y="${H - 10}" text-anchor="middle">tok/s per user (1000 / TPOT p50)</text>`,
    `<text transform="translate(14 ${(PAD.top + H - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">${perGpu ? "output tok/s per GPU" : "output tok/s"}</text>`,
  );
  curves.forEach((c, i) => {
    const isHead = i === curves.length - 1;
    const newestBase = i === curves.length - 2 && bases.length > 0;
    const colour = isHead ? HEAD : BASE;
    const opacity = isHead || newestBase ? 1 : 0.35;
    const front = c.frontier.points.filter((p) => p.pareto);
    const line = front.map((p) => `${sx(p.tok_s_per_user).toFixed(1)},${sy(yOf(p)).toFixed(1)}`).join(" ");
    parts.push(
      `<g opacity="${opacity}"><polyline points="${line}" fill="none" stroke="${colour}" stroke-width="${isHead ? 2.5 : 1.5}"/>`,
    );
    for (const p of c.frontier.points) {
      const [x, y] = [sx(p.tok_s_per_user).toFixed(1), sy(yOf(p)).toFixed(1)];
      parts.push(
        `<circle cx="${x}" cy="${y}" r="3" fill="${colour}"><title>${esc(`${c.label}: level ${p.level}`)}</title></circle>`,
      );
      if (isHead || newestBase)
        parts.push(
          `<text x="${x}" y="${Number(y) - 6}" text-anchor="middle" fill="${colour}">${p.level}</text>`,
        );
    }
    parts.push("</g>");
  });
  const legend = [
    { text: head.label, colour: HEAD, opacity: 1 },
    ...(bases.length > 0 ? [{ text: bases[0]!.label, colour: BASE, opacity: 1 }] : []),
    ...(bases.length > 1
      ? [
          {
            text: `${bases.length - 1} earlier run${bases.length > 2 ? "s" : ""} of the base`,
            colour: BASE,
            opacity: 0.35,
          },
        ]
      : []),
  ];
  legend.forEach((l, i) => {
    const y = PAD.top + 8 + i * 16;
    parts.push(
      `<g opacity="${l.opacity}"><line x1="${W - 220}" x2="${W - 200}" y1="${y}" y2="${y}" stroke="${l.colour}" stroke-width="2.5"/>`,
      `<text x="${W - 194}" y="${y + 4}">${esc(l.text.slice(0, 32))}</text></g>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}
