/**
 * The hero photo `/canyonlands.jpg`, made here: a canyon-country scene at dusk
 * rendered from seeded noise (sky with a low sun, five ranges of stepped mesas
 * fading into haze, sandstone strata, a dark foreground rim with scrub, film
 * grain). The project ships no photograph it does not own; this one it makes
 * at build time, the same pixels every time.
 */
import { mulberry32 as random } from '../../domain/seeded-random.js';

/** Smooth 1-D value noise over a table of 1024 random values. */
function noise1(seed: number): (x: number) => number {
  const rnd = random(seed);
  const table = Float64Array.from({ length: 1024 }, rnd);
  return (x) => {
    const i = Math.floor(x);
    const f = x - i;
    const a = table[((i % 1024) + 1024) % 1024];
    const b = table[(((i + 1) % 1024) + 1024) % 1024];
    const s = f * f * (3 - 2 * f);
    return a + (b - a) * s;
  };
}

/** Smooth 2-D value noise on a 256×256 lattice. */
function noise2(seed: number): (x: number, y: number) => number {
  const rnd = random(seed);
  const table = Float64Array.from({ length: 256 * 256 }, rnd);
  const at = (i: number, j: number) => table[(((j % 256) + 256) % 256) * 256 + (((i % 256) + 256) % 256)];
  return (x, y) => {
    const i = Math.floor(x);
    const j = Math.floor(y);
    const fx = x - i;
    const fy = y - j;
    const sx = fx * fx * (3 - 2 * fx);
    const sy = fy * fy * (3 - 2 * fy);
    const top = at(i, j) + (at(i + 1, j) - at(i, j)) * sx;
    const bottom = at(i, j + 1) + (at(i + 1, j + 1) - at(i, j + 1)) * sx;
    return top + (bottom - top) * sy;
  };
}

const smoothstep = (a: number, b: number, x: number) => {
  const t = Math.min(1, Math.max(0, (x - a) / (b - a)));
  return t * t * (3 - 2 * t);
};
const mix = (a: number, b: number, t: number) => a + (b - a) * t;
type Rgb = [number, number, number];
const mixRgb = (a: Rgb, b: Rgb, t: number): Rgb => [mix(a[0], b[0], t), mix(a[1], b[1], t), mix(a[2], b[2], t)];

/**
 * The five ranges, farthest first: where the foot of each sits and its tallest
 * mesa (fractions of the height), the horizontal frequency of its mesas, how
 * much of it stands as mesa (`cut`; higher: fewer, narrower mesas), its
 * distance (0 nearest, 1 farthest, in haze) and its noise seed.
 */
const RANGES = [
  { base: 0.6, height: 0.1, freq: 3.4, cut: 0.55, distance: 1, seed: 11 },
  { base: 0.64, height: 0.13, freq: 2.6, cut: 0.53, distance: 0.8, seed: 23 },
  { base: 0.7, height: 0.16, freq: 2.0, cut: 0.52, distance: 0.58, seed: 37 },
  { base: 0.8, height: 0.19, freq: 1.5, cut: 0.5, distance: 0.34, seed: 41 },
  { base: 0.95, height: 0.16, freq: 1.1, cut: 0.47, distance: 0.08, seed: 59 },
];

const SKY_TOP: Rgb = [38, 52, 104];
const SKY_MID: Rgb = [196, 120, 112];
const SKY_LOW: Rgb = [250, 186, 120];
const HAZE: Rgb = [190, 140, 142];
const ROCK: Rgb = [150, 64, 34];
const ROCK_LIGHT: Rgb = [204, 112, 62];
const ROCK_PALE: Rgb = [222, 176, 132];

/** Renders the scene into RGBA pixels, four bytes a pixel, row by row. */
export function renderCanyon(width = 1600, height = 640): { width: number; height: number; data: Buffer } {
  const data = Buffer.alloc(width * height * 4);
  const grain = random(7);
  const sunX = 0.7 * width;
  const sunY = 0.46 * height;
  // Per range: the skyline (top y per column), precomputed.
  const skylines = RANGES.map((r) => {
    const n = noise1(r.seed);
    const rough = noise1(r.seed + 1);
    const top = new Float64Array(width);
    for (let x = 0; x < width; x++) {
      const u = (x / width) * r.freq * 4;
      const field = 0.6 * n(u) + 0.3 * n(u * 2.1 + 5) + 0.1 * n(u * 4.3 + 9);
      // Steep cliffs around the cut, flat tops above it, a second bench below it.
      const mesa = smoothstep(r.cut - 0.02, r.cut + 0.02, field) * 0.75 + smoothstep(r.cut - 0.14, r.cut - 0.1, field) * 0.25;
      const edge = (rough(x / 9) - 0.5) * 0.012 * (1 - r.distance * 0.6);
      top[x] = (r.base - r.height * mesa + edge - 0.02 * rough(x / 140)) * height;
    }
    return top;
  });
  // The skylines smoothed over 9 px: the slope that decides light and shade ignores the ragged edge.
  const smooth = skylines.map((top) =>
    top.map((_, x) => {
      let sum = 0;
      for (let k = -4; k <= 4; k++) sum += top[Math.min(width - 1, Math.max(0, x + k))];
      return sum / 9;
    }),
  );
  const strata = noise2(101);
  const texture = noise2(202);
  const scrub = noise2(303);

  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let color: Rgb | undefined;
      for (let i = RANGES.length - 1; i >= 0; i--) {
        const top = skylines[i][x];
        if (y < top) continue;
        const r = RANGES[i];
        const depth = y - top;
        // Sun from the right: a face that rises to the right is in shade.
        const slope = (smooth[i][Math.min(width - 1, x + 14)] - smooth[i][Math.max(0, x - 14)]) / 28;
        const shade = 1 - 0.42 * smoothstep(0.15, 0.9, -slope) + 0.1 * smoothstep(0.15, 0.9, slope);
        const band = 0.5 + 0.5 * Math.sin((y / height) * 260 * (1.4 - r.distance * 0.6) + strata(x / 90, y / 20) * 5);
        let rock = mixRgb(ROCK, ROCK_LIGHT, band * 0.35 + 0.25 * strata(x / 200, y / 30));
        if (band > 0.93) rock = mixRgb(rock, ROCK_PALE, 0.25);
        // The lit rim of each bench, then the cliff darkening toward its foot.
        const rim = depth < 3 ? 1.18 : 1;
        const foot = 1 - 0.25 * smoothstep(0, r.height * height, depth);
        const grit = 0.88 + 0.24 * texture(x / (6 + r.distance * 20), y / (6 + r.distance * 20));
        const lum = shade * rim * foot * grit * (1 - 0.35 * (1 - r.distance) * smoothstep(0.85, 1, y / height));
        color = [rock[0] * lum, rock[1] * lum, rock[2] * lum];
        color = mixRgb(color, HAZE, Math.pow(r.distance, 1.4) * 0.78);
        // Scrub on the near range: dark green dots on flat ground.
        if (r.distance < 0.1 && depth > 8) {
          const s = scrub(x / 5, y / 3);
          if (s > 0.8) color = mixRgb(color, [46, 58, 36], smoothstep(0.8, 0.9, s) * 0.85);
        }
        break;
      }
      if (!color) {
        const t = y / height;
        color = t < 0.3 ? mixRgb(SKY_TOP, SKY_MID, t / 0.3) : mixRgb(SKY_MID, SKY_LOW, Math.min(1, (t - 0.3) / 0.25));
        const d = Math.hypot(x - sunX, (y - sunY) * 1.6) / width;
        const glow = Math.exp(-d * 9) * 0.9 + Math.exp(-d * 60) * 0.6;
        color = mixRgb(color, [255, 226, 170], Math.min(1, glow));
      }
      const g = (grain() - 0.5) * 10;
      const o = (y * width + x) * 4;
      data[o] = clamp(color[0] + g);
      data[o + 1] = clamp(color[1] + g);
      data[o + 2] = clamp(color[2] + g);
      data[o + 3] = 255;
    }
  }
  return { width, height, data };
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));
