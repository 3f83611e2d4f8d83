/**
 * Renders the shared chart specifications (src/shared/charts.ts) in Node: Vega-Lite -> Vega ->
 * SVG (vega's headless renderer), and SVG -> PNG with resvg. The libraries load lazily, only
 * when plots are asked for.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";
import type { ResultDocument } from "../../schema/v1.ts";
import { documentSpecs, type Spec } from "../../shared/charts.ts";

/**
 * A charting library, or an error that says how to get it: they are optional dependencies (a
 * sweep needs none of them), left out by `npm i --omit=optional` or a failed native build.
 */
async function charting<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw err;
    throw new TokenbenchError(
      "plots_unavailable",
      `charts need ${name}, which is not installed (tokenbench's charting libraries are optional dependencies): install them with npm i vega@6.4.0 vega-lite@6.4.0 @resvg/resvg-js@2.6.2, or leave out --plots; the results themselves are written`,
    );
  }
}

export async function renderSvg(spec: Spec): Promise<string> {
  const [vega, vl] = await Promise.all([
    charting("vega", () => import("vega")),
    charting("vega-lite", () => import("vega-lite")),
  ]);
  const compiled = vl.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  const { Resvg } = await charting("@resvg/resvg-js", () => import("@resvg/resvg-js"));
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
