/** What every chart shares (Vega-Lite): its schema, size and fonts. */
export type Spec = Record<string, unknown>;

export const BASE: Spec = {
  $schema: "https://vega.github.io/schema/vega-lite/v6.json",
  width: 420,
  height: 240,
  config: {
    font: "DejaVu Sans, Verdana, sans-serif",
    view: { stroke: "#ddd" },
    axis: { labelFontSize: 11, titleFontSize: 12, gridColor: "#eee" },
    legend: { orient: "bottom", labelFontSize: 11 },
  },
};
