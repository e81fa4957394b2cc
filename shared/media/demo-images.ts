/**
 * Pictures drawn in code for the demo stores (`npm run dev`; docs/media.md "Demo photos"): flat illustrations
 * of a product (a kurta's silhouette, a draped saree or shawl, palazzos, a block-printed sheet, a diya) in the
 * colours its variants name, the store's mark (logo and favicon), a banner and collection covers. Nothing is
 * shipped or downloaded: the pixels are computed here (anti-aliased signed-distance shapes) and encoded as PNG
 * by the codec, then go through the same upload pipeline as a merchant's photos.
 */

export interface Pixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

type Rgb = [number, number, number];
type Shape = (x: number, y: number) => number;

const COLOUR_WORDS: Record<string, string> = {
  red: "#b3262e", maroon: "#6e1423", crimson: "#9e1b32", rose: "#c2577a", pink: "#d66f93", orange: "#d9722b", saffron: "#e08a1e",
  yellow: "#e3b505", mustard: "#c9962b", gold: "#c79a2e", green: "#2f7d4f", emerald: "#0f7a5a", teal: "#177e89", blue: "#2a5caa",
  indigo: "#2e3a87", navy: "#1f2d5c", purple: "#6b3fa0", ivory: "#efe6d2", cream: "#eadfc8", white: "#f2efe8", beige: "#d8c3a0",
  grey: "#7b7f86", gray: "#7b7f86", charcoal: "#3b3f45", black: "#25272b", brown: "#7a4b2a", rust: "#a4462a",
};
/** Colours for a product whose words name none: chosen by its title, so a product keeps its colour. */
const FALLBACK = ["#2e3a87", "#0f7a5a", "#9e1b32", "#c9962b", "#177e89", "#6b3fa0", "#a4462a", "#2a5caa"];

const hex = (h: string): Rgb => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
const mix = (a: Rgb, b: Rgb, t: number): Rgb => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
const WHITE: Rgb = [255, 255, 255];

function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** The colours named in these words (variant titles, the product's title), else one chosen by the first word. */
export function coloursOf(words: readonly string[]): string[] {
  const named = words.flatMap((w) => w.toLowerCase().split(/[^a-z]+/)).filter((w) => w in COLOUR_WORDS).map((w) => COLOUR_WORDS[w]!);
  const unique = [...new Set(named)];
  return unique.length ? unique : [FALLBACK[hashOf(words[0] ?? "") % FALLBACK.length]!];
}

class Canvas implements Pixels {
  readonly data: Uint8ClampedArray;
  constructor(
    readonly width: number,
    readonly height: number,
    fill: Rgb,
  ) {
    this.data = new Uint8ClampedArray(width * height * 4);
    for (let i = 0; i < this.data.length; i += 4) this.data.set([fill[0], fill[1], fill[2], 255], i);
  }

  /** Paints a shape (negative inside) with a one-pixel anti-aliased edge, within its bounding box. */
  paint(shape: Shape, colour: Rgb, box: [number, number, number, number] = [0, 0, this.width, this.height], alpha = 1): void {
    const [x0, y0, x1, y1] = [Math.max(0, Math.floor(box[0])), Math.max(0, Math.floor(box[1])), Math.min(this.width, Math.ceil(box[2])), Math.min(this.height, Math.ceil(box[3]))];
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const cover = Math.min(1, Math.max(0, 0.5 - shape(x + 0.5, y + 0.5))) * alpha;
        if (cover <= 0) continue;
        const i = (y * this.width + x) * 4;
        for (let k = 0; k < 3; k++) this.data[i + k] = this.data[i + k]! + (colour[k]! - this.data[i + k]!) * cover;
      }
    }
  }
}

const circle = (cx: number, cy: number, r: number): Shape => (x, y) => Math.hypot(x - cx, y - cy) - r;
const rect = (x0: number, y0: number, x1: number, y1: number, r = 0): Shape => (x, y) => {
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2, hx = (x1 - x0) / 2 - r, hy = (y1 - y0) / 2 - r;
  const qx = Math.abs(x - cx) - hx, qy = Math.abs(y - cy) - hy;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
};
/** A polygon's signed distance (points in order, scaled to the canvas by the caller). */
function polygon(points: readonly (readonly [number, number])[]): Shape {
  return (x, y) => {
    let d = Infinity;
    let inside = false;
    for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
      const [ax, ay] = points[i]!, [bx, by] = points[j]!;
      const ex = bx - ax, ey = by - ay, wx = x - ax, wy = y - ay;
      const t = Math.max(0, Math.min(1, (wx * ex + wy * ey) / (ex * ex + ey * ey)));
      d = Math.min(d, Math.hypot(wx - ex * t, wy - ey * t));
      if (ay > y !== by > y && x < ((bx - ax) * (y - ay)) / (by - ay) + ax) inside = !inside;
    }
    return inside ? -d : d;
  };
}
const scaled = (points: [number, number][], w: number, h: number) => points.map(([x, y]) => [x * w, y * h] as [number, number]);
const boxOf = (points: readonly (readonly [number, number])[]): [number, number, number, number] => [
  Math.min(...points.map((p) => p[0])) - 2, Math.min(...points.map((p) => p[1])) - 2, Math.max(...points.map((p) => p[0])) + 2, Math.max(...points.map((p) => p[1])) + 2,
];

/** Small block-print dots in rows over a box: the pattern of every textile here. */
function motifs(c: Canvas, box: [number, number, number, number], colour: Rgb, step: number, r: number, within: Shape): void {
  for (let y = box[1] + step / 2, row = 0; y < box[3]; y += step, row++) {
    for (let x = box[0] + (row % 2 ? step : step / 2); x < box[2]; x += step) {
      if (within(x, y) < -r) c.paint(circle(x, y, r), colour, [x - r - 1, y - r - 1, x + r + 1, y + r + 1]);
    }
  }
}

type Kind = "garment" | "drape" | "pants" | "sheet" | "lamp" | "tile";
const KINDS: [RegExp, Kind][] = [
  [/kurta|kurti|shirt|jacket|tunic|kameez|top|blouse|dress/i, "garment"],
  [/saree|sari|dupatta|shawl|stole|scarf|odhni/i, "drape"],
  [/pant|palazzo|trouser|salwar|pyjama/i, "pants"],
  [/sheet|cushion|cover|rug|throw|quilt|towel|napkin|runner|bag/i, "sheet"],
  [/lamp|diya|candle|lantern/i, "lamp"],
];

/** A product's picture, `width`x`height` (portrait 4:5 suits cards): its kind from its title, its colours from its words. */
export function productPicture(title: string, colourWords: readonly string[], width = 720, height = 900): Pixels {
  const colours = coloursOf([...colourWords, title]).map(hex);
  const main = colours[0]!;
  const second = colours[1] ?? mix(main, WHITE, 0.55);
  const c = new Canvas(width, height, mix(main, WHITE, 0.88));
  c.paint(circle(width / 2, height * 0.47, width * 0.42), mix(main, WHITE, 0.78));
  const kind = KINDS.find(([re]) => re.test(title))?.[1] ?? "tile";
  const light = mix(main, WHITE, 0.45);
  if (kind === "garment") {
    const long = /kurta|kurti|tunic|kameez|dress/i.test(title) ? 0.86 : 0.7;
    const pts = scaled([[0.36, 0.12], [0.44, 0.1], [0.5, 0.16], [0.56, 0.1], [0.64, 0.12], [0.86, 0.26], [0.8, 0.36], [0.68, 0.3], [0.7, long], [0.3, long], [0.32, 0.3], [0.2, 0.36], [0.14, 0.26]], width, height);
    const body = polygon(pts);
    c.paint(body, main, boxOf(pts));
    motifs(c, boxOf(pts), light, width * 0.07, width * 0.012, body);
    const placket = scaled([[0.485, 0.16], [0.515, 0.16], [0.515, 0.34], [0.485, 0.34]], width, height);
    c.paint(polygon(placket), second, boxOf(placket));
    const hem = scaled([[0.3, long - 0.035], [0.7, long - 0.035], [0.7, long], [0.3, long]], width, height);
    c.paint(polygon(hem), second, boxOf(hem));
  } else if (kind === "drape") {
    const box: [number, number, number, number] = [width * 0.28, height * 0.1, width * 0.72, height * 0.9];
    const cloth = rect(...box, width * 0.01);
    c.paint(cloth, main, box);
    for (const f of [0.28, 0.46, 0.64]) {
      const fold = polygon(scaled([[0.2, f], [0.8, f - 0.1], [0.8, f - 0.07], [0.2, f + 0.03]], width, height));
      c.paint((x, y) => Math.max(fold(x, y), cloth(x, y)), mix(main, [0, 0, 0], 0.18), box);
    }
    const pallu = rect(box[0], height * 0.74, box[2], box[3]);
    c.paint((x, y) => Math.max(pallu(x, y), cloth(x, y)), second, box);
    motifs(c, [box[0], height * 0.75, box[2], box[3]], mix(second, WHITE, 0.5), width * 0.05, width * 0.01, pallu);
    for (const x of [0.3, 0.7]) c.paint(rect(width * (x - 0.01), height * 0.1, width * (x + 0.01), height * 0.9), second, [width * (x - 0.03), height * 0.09, width * (x + 0.03), height * 0.91]);
  } else if (kind === "pants") {
    const pts = scaled([[0.3, 0.12], [0.7, 0.12], [0.8, 0.88], [0.54, 0.88], [0.5, 0.4], [0.46, 0.88], [0.2, 0.88]], width, height);
    c.paint(polygon(pts), main, boxOf(pts));
    c.paint(rect(width * 0.3, height * 0.12, width * 0.7, height * 0.16), second, [width * 0.29, height * 0.11, width * 0.71, height * 0.17]);
  } else if (kind === "sheet") {
    const sheet = rect(width * 0.16, height * 0.22, width * 0.84, height * 0.78, width * 0.02);
    c.paint(sheet, main, [width * 0.15, height * 0.21, width * 0.85, height * 0.79]);
    const inner = rect(width * 0.22, height * 0.28, width * 0.78, height * 0.72);
    c.paint(inner, mix(main, WHITE, 0.82), [width * 0.21, height * 0.27, width * 0.79, height * 0.73]);
    motifs(c, [width * 0.22, height * 0.28, width * 0.78, height * 0.72], main, width * 0.08, width * 0.022, inner);
  } else if (kind === "lamp") {
    const bowl = (x: number, y: number) => Math.max(Math.hypot((x - width / 2) / (width * 0.26), (y - height * 0.6) / (height * 0.14)) - 1, height * 0.6 - y) * width * 0.2;
    c.paint(bowl, main, [width * 0.2, height * 0.5, width * 0.8, height * 0.8]);
    const flame = (x: number, y: number) => Math.hypot((x - width / 2) / (width * 0.06), (y - height * 0.5) / (height * 0.1)) * width * 0.06 - width * 0.06;
    c.paint(flame, hex("#f2a93b"), [width * 0.4, height * 0.35, width * 0.6, height * 0.62]);
    c.paint((x, y) => Math.hypot((x - width / 2) / (width * 0.025), (y - height * 0.53) / (height * 0.05)) * width * 0.025 - width * 0.025, hex("#fbe3a1"), [width * 0.45, height * 0.45, width * 0.55, height * 0.6]);
  } else {
    const tile = rect(width * 0.2, height * 0.2, width * 0.8, height * 0.8, width * 0.04);
    c.paint(tile, main, [width * 0.19, height * 0.19, width * 0.81, height * 0.81]);
    motifs(c, [width * 0.2, height * 0.2, width * 0.8, height * 0.8], light, width * 0.1, width * 0.03, tile);
  }
  return c;
}

/** The store's mark (logo and favicon): a disc in the brand colour with an eight-petal block-print flower. */
export function storeMark(brand: string, accent: string, size = 512): Pixels {
  const b = hex(brand);
  const c = new Canvas(size, size, WHITE);
  // Transparent outside the disc would need alpha; a white square keeps the mark readable on any page.
  const r = size * 0.48;
  c.paint(circle(size / 2, size / 2, r), b);
  for (let k = 0; k < 8; k++) {
    const a = (k * Math.PI) / 4;
    const px = size / 2 + Math.cos(a) * r * 0.45, py = size / 2 + Math.sin(a) * r * 0.45;
    c.paint(circle(px, py, r * 0.2), mix(b, WHITE, 0.85), [px - r * 0.22, py - r * 0.22, px + r * 0.22, py + r * 0.22]);
  }
  c.paint(circle(size / 2, size / 2, r * 0.24), hex(accent));
  return c;
}

/** A wide picture of colour bands with block-print rows: the home banner and collection covers. */
export function bandsPicture(colours: readonly string[], width: number, height: number, seed: string): Pixels {
  const rgb = (colours.length ? colours : FALLBACK.slice(0, 3)).map(hex);
  const c = new Canvas(width, height, mix(rgb[0]!, WHITE, 0.9));
  const n = Math.max(3, rgb.length);
  const tilt = ((hashOf(seed) % 7) - 3) * 0.04;
  for (let i = 0; i < n; i++) {
    const colour = rgb[i % rgb.length]!;
    const x0 = (i / n) * width * 1.2 - width * 0.1;
    const x1 = x0 + (width * 1.2) / n + 1;
    const pts: [number, number][] = [[x0, 0], [x1, 0], [x1 + tilt * height, height], [x0 + tilt * height, height]];
    const band = polygon(pts);
    c.paint(band, i % 2 ? mix(colour, WHITE, 0.25) : colour, boxOf(pts));
    motifs(c, boxOf(pts), mix(colour, WHITE, 0.6), Math.max(24, height * 0.12), Math.max(3, height * 0.02), band);
  }
  return c;
}
