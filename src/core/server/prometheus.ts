/**
 * Parser for the Prometheus text exposition format (0.0.4), the one boundary where server
 * `/metrics` enter tokenbench. Samples only: `name{label="v",...} value [timestamp]`; HELP/TYPE
 * and other comments are skipped; label values may contain escaped quotes and commas.
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseValue(s: string): number {
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (s === "NaN") return Number.NaN;
  return Number(s);
}

export function parsePrometheus(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    let i = 0;
    while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i]!)) i++;
    const name = line.slice(0, i);
    if (name === "") continue;
    const labels: Record<string, string> = {};
    if (line[i] === "{") {
      i++;
      while (i < line.length && line[i] !== "}") {
        while (line[i] === " " || line[i] === ",") i++;
        if (line[i] === "}") break;
        const eq = line.indexOf("=", i);
        if (eq === -1) break;
        const key = line.slice(i, eq).trim();
        i = eq + 1;
        if (line[i] !== '"') break;
        i++;
        let v = "";
        while (i < line.length && line[i] !== '"') {
          if (line[i] === "\\" && i + 1 < line.length) {
            const n = line[i + 1]!;
            v += n === "n" ? "\n" : n;
            i += 2;
          } else v += line[i++];
        }
        i++; // closing quote
        labels[key] = v;
      }
      i++; // closing brace
    }
    const rest = line.slice(i).trim().split(/\s+/);
    if (rest[0] === undefined || rest[0] === "") continue;
    const value = parseValue(rest[0]);
    if (Number.isNaN(value) && rest[0] !== "NaN") continue;
    out.push({ name, labels, value });
  }
  return out;
}
