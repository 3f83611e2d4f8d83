/**
 * Renders the shared chart specifications (src/shared/charts.ts) in Node: Vega-Lite -> Vega ->
 * SVG (vega's headless renderer), and SVG -> PNG with resvg. The libraries load lazily, only
 * when plots are asked for.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResultDocument } from "../../schema/v1.ts";
import { documentSpecs, type Spec } from "../../shared/charts.ts";

export async function renderSvg(spec: Spec): Promise<string> {
  const [vega, vl] = await Promise.all([import("vega"), import("vega-lite")]);
  const compiled = vl.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  const { Resvg } = await import("@resvg/resvg-js");
  const r = new Resvg(svg, {
    fitTo: { mode: "zoom", value: scale },
    background: "white",
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
  });
  return r.render().asPng();
}

export interface PlotFile {
  name: string;
  svg: string;
  png: string | null;
}

/** Write every chart of `doc` (optionally against a baseline document) into `dir`. */
export async function writePlots(
  doc: ResultDocument,
  dir: string,
  opts: { png?: boolean; baseline?: ResultDocument } = {},
): Promise<PlotFile[]> {
  mkdirSync(dir, { recursive: true });
  const out: PlotFile[] = [];
  for (const [name, spec] of Object.entries(documentSpecs(doc, opts.baseline))) {
    const svg = await renderSvg(spec);
    const svgPath = join(dir, `${name}.svg`);
    writeFileSync(svgPath, svg);
    let pngPath: string | null = null;
    if (opts.png !== false) {
      pngPath = join(dir, `${name}.png`);
      writeFileSync(pngPath, await svgToPng(svg));
    }
    out.push({ name, svg: svgPath, png: pngPath });
  }
  return out;
}
