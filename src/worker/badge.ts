/** Badges: a shields-style SVG, the shields.io endpoint JSON, and a sparkline SVG. */

import { maxOf, minOf } from "../shared/extremes.ts";
import { mean, scaleOf } from "../shared/statistics.ts";
import type { Verdict } from "../shared/verdict.ts";
import { visible } from "../shared/visible.ts";

const COLORS: Record<Verdict | "none", string> = {
  improved: "#2ea44f",
  unchanged: "#0366d6",
  regressed: "#d73a49",
  too_noisy: "#b08800",
  not_judged: "#b08800",
  no_baseline: "#6a737d",
  none: "#9f9f9f",
};
export const SHIELDS_COLORS: Record<Verdict | "none", string> = {
  improved: "success",
  unchanged: "blue",
  regressed: "critical",
  too_noisy: "yellow",
  not_judged: "yellow",
  no_baseline: "inactive",
  none: "lightgrey",
};

/**
 * XML-escaped, with the characters XML 1.0 forbids (C0 controls but tab/LF/CR, C1, U+FFFE/F)
 * removed and invisible format characters written out (shared/visible.ts).
 */
const esc = (s: string) =>
  visible(s)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
/** Rough Verdana 11px text width: good enough to size a badge without a font. */
const textWidth = (s: string) =>
  Math.ceil([...s].reduce((w, ch) => w + (/[il.,:;|!' ]/.test(ch) ? 3.5 : /[mwMW]/.test(ch) ? 9.5 : 6.8), 0));

export function badgeSvg(label: string, message: string, verdict: Verdict | "none"): string {
  const lw = textWidth(label) + 12;
  const mw = textWidth(message) + 12;
  const w = lw + mw;
  const color = COLORS[verdict];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${esc(label)}: ${esc(message)}"><title>${esc(label)}: ${esc(message)}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${color}"/><rect width="${w}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"><text x="${lw / 2}" y="14">${esc(label)}</text><text x="${lw + mw / 2}" y="14">${esc(message)}</text></g></svg>`;
}

/** shields.io draws the label and message as given: invisible format characters written out first. */
export function shieldsJson(label: string, message: string, verdict: Verdict | "none") {
  return {
    schemaVersion: 1,
    label: visible(label),
    message: visible(message),
    color: SHIELDS_COLORS[verdict],
  };
}

export function sparklineSvg(values: readonly number[], width = 120, height = 24, empty = "no data"): string {
  if (values.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="${esc(empty)}"><text x="4" y="16" font-family="sans-serif" font-size="11" fill="#9f9f9f">${esc(empty)}</text></svg>`;
  }
  // Honest scale: the axis spans at least 20 % of the mean, so a 0.4 % wobble stays a wobble and
  // only a real move reaches the edges.
  // In units of the largest magnitude, so no finite value overflows the span or the mean.
  const scale = scaleOf(values);
  const scaled = values.map((v) => v / scale);
  const lo = minOf(scaled);
  const hi = maxOf(scaled);
  const m = mean(scaled);
  const span = Math.max(hi - lo, 0.2 * Math.abs(m)) || 1;
  const min = (lo + hi) / 2 - span / 2;
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const pts = scaled.map(
    (v, i) => `${(2 + i * step).toFixed(1)},${(height - 2 - ((v - min) / span) * (height - 4)).toFixed(1)}`,
  );
  const last = pts[pts.length - 1]!.split(",");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="last ${values.length} values"><polyline fill="none" stroke="#0366d6" stroke-width="1.5" points="${pts.join(" ")}"/><circle cx="${last[0]}" cy="${last[1]}" r="2" fill="#0366d6"/></svg>`;
}

export function formatValue(v: number, unit: string): string {
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`.trim();
}
