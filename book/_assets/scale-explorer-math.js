// The scale explorer's math: one attention row of n logits, in float64.
//
// Everything the explorer shows is computed here, and tests/test_explorer.py checks each function
// against torch (float64) on rows that a torch computation exports: softmax, entropy, the spectral
// norm of the softmax Jacobian and the gradient a row passes back. A plain script (no module), so
// that it also runs from file://; it defines one global, ScaleExplorerMath.
(function (root) {
  "use strict";

  // --- one row ---------------------------------------------------------------------------------

  /** p = softmax(z), with the row's maximum subtracted first, so that no exp overflows. */
  function softmax(z) {
    let max = -Infinity;
    for (const value of z) if (value > max) max = value;
    const p = new Float64Array(z.length);
    let sum = 0;
    for (let i = 0; i < z.length; i++) {
      p[i] = Math.exp(z[i] - max);
      sum += p[i];
    }
    for (let i = 0; i < z.length; i++) p[i] /= sum;
    return p;
  }

  /** Shannon entropy in nats, -sum p ln p, with 0 ln 0 = 0 (helpers.softmax_entropy). */
  function entropy(p) {
    let h = 0;
    for (const value of p) if (value > 0) h -= value * Math.log(value);
    return h;
  }

  function largest(p) {
    let max = 0;
    for (const value of p) if (value > max) max = value;
    return max;
  }

  /** ||J||_2 of the softmax Jacobian J = diag(p) - p p^T (symmetric, positive semi-definite).
   *
   * Its largest eigenvalue λ lies between the two largest weights a >= b: J <= diag(p) <= a·I,
   * and a rank-one change of diag(p) interlaces with it. If the largest weight is tied, λ = a
   * (the eigenvector e_i - e_j of the tied pair). Otherwise λ is the one root in (b, a) of the
   * secular equation sum_i p_i^2 / (p_i - λ) = 1 (from J v = λ v: v_i = p_i (p·v) / (p_i - λ)).
   * With S(λ) = sum over the other weights of p_i^2 / (λ - p_i), that is λ = a (r + S) / (1 + S),
   * r = 1 - a: a form without cancellation, solved by Newton's method inside a shrinking bracket. */
  function jacobianNorm(p) {
    const n = p.length;
    let top = 0;
    for (let i = 1; i < n; i++) if (p[i] > p[top]) top = i;
    const a = p[top];
    let b = 0;
    let rest = 0; // 1 - a, summed from the other weights: exact where 1 - a would round to 0
    for (let i = 0; i < n; i++) {
      if (i === top) continue;
      if (p[i] === a) return a;
      if (p[i] > b) b = p[i];
      rest += p[i];
    }
    if (rest === 0) return 0; // exactly one-hot: J = 0
    let low = b;
    let high = a;
    let lambda = b + 0.5 * (a - b);
    for (let step = 0; step < 100; step++) {
      let s = 0;
      let ds = 0; // -dS/dλ
      for (let i = 0; i < n; i++) {
        const value = p[i];
        if (i !== top && value > 0) {
          const inverse = 1 / (lambda - value);
          const term = value * value * inverse;
          s += term;
          ds += term * inverse;
        }
      }
      const residual = (a * (rest + s)) / (1 + s) - lambda; // decreases with λ
      if (residual > 0) low = lambda;
      else if (residual < 0) high = lambda;
      else break;
      const slope = (-a * (1 - rest) * ds) / ((1 + s) * (1 + s)) - 1;
      let next = lambda - residual / slope;
      if (!(next > low && next < high)) next = 0.5 * (low + high);
      if (Math.abs(next - lambda) <= 4 * Number.EPSILON * lambda || next <= low || next >= high) break;
      lambda = next;
    }
    return lambda;
  }

  /** dL/dz = J^T g = p ⊙ (g - (p·g) 1), the gradient a row passes back for an upstream dL/dp = g
   * (helpers.softmax_backward). */
  function rowGradient(p, g) {
    let dot = 0;
    for (let i = 0; i < p.length; i++) dot += p[i] * g[i];
    const grad = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) grad[i] = p[i] * (g[i] - dot);
    return grad;
  }

  function norm(x) {
    let sum = 0;
    for (const value of x) sum += value * value;
    return Math.sqrt(sum);
  }

  /** Everything the explorer shows of one row: logits z, upstream gradient g. */
  function rowStatistics(z, g) {
    const p = softmax(z);
    const grad = rowGradient(p, g);
    return {
      p: p,
      entropy: entropy(p),
      largest: largest(p),
      jacobianNorm: jacobianNorm(p),
      grad: grad,
      gradNorm: norm(grad),
    };
  }

  // --- random rows -------------------------------------------------------------------------------
  // Not torch's generator: the explorer draws its own rows, and its averages agree with the
  // chapters' within their sampling error (tests/test_explorer.py says how closely).

  /** xoshiro128** (Blackman and Vigna), seeded through splitmix32: uniforms in (0, 1), standard
   * normals (Box–Muller) and Gamma variates (Marsaglia and Tsang, 2000). */
  function generator(seed) {
    let state = seed >>> 0;
    const splitmix = () => {
      state = (state + 0x9e3779b9) >>> 0;
      let x = state;
      x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
      return (x ^ (x >>> 16)) >>> 0;
    };
    let s0 = splitmix();
    let s1 = splitmix();
    let s2 = splitmix();
    let s3 = splitmix();
    const next = () => {
      const x = Math.imul(s1, 5);
      const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      return result;
    };
    const uniform = () => (next() + 0.5) / 4294967296;
    let spare = NaN;
    const normal = () => {
      if (spare === spare) {
        const value = spare;
        spare = NaN;
        return value;
      }
      const radius = Math.sqrt(-2 * Math.log(uniform()));
      const angle = 2 * Math.PI * uniform();
      spare = radius * Math.sin(angle);
      return radius * Math.cos(angle);
    };
    const gamma = (shape) => {
      if (shape < 1) return gamma(shape + 1) * Math.pow(uniform(), 1 / shape);
      const d = shape - 1 / 3;
      const c = 1 / Math.sqrt(9 * d);
      for (;;) {
        let x;
        let v;
        do {
          x = normal();
          v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        const u = uniform();
        if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
      }
    };
    return { uniform: uniform, normal: normal, gamma: gamma };
  }

  const WIDTHS = 13; // d_k = 1, 2, 4, ..., 4096

  /** `rows` attention rows over n keys: raw scores s_j = q·k_j for q and k_j with d_k independent
   * standard-normal components, at every d_k = 2^e up to 4096, and an upstream gradient g per row
   * (standard normal, as in chapter 3).
   *
   * Given q, the n scores are independent normals of variance ||q||^2, and ||q||^2 is chi-square with
   * d_k degrees of freedom. So a row is drawn as ||q|| times n standard normals: the same
   * distribution as drawing q and all n keys, at a cost that does not grow with d_k. The widths
   * are nested, as if q kept its first d_k components: ||q||^2 at 2d is ||q||^2 at d plus an
   * independent chi-square with d degrees of freedom (twice a Gamma(d / 2)), so moving d_k
   * rescales the same row instead of drawing a new one. */
  function drawRows(seed, n, rows) {
    const random = generator(seed);
    const normals = new Float64Array(rows * n);
    const g = new Float64Array(rows * n);
    const lengthSquared = new Float64Array(rows * WIDTHS);
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < n; j++) normals[r * n + j] = random.normal();
      for (let j = 0; j < n; j++) g[r * n + j] = random.normal();
      let sum = random.normal() ** 2;
      lengthSquared[r * WIDTHS] = sum;
      for (let e = 1; e < WIDTHS; e++) {
        sum += 2 * random.gamma(2 ** (e - 1) / 2);
        lengthSquared[r * WIDTHS + e] = sum;
      }
    }
    return { seed: seed, n: n, rows: rows, normals: normals, g: g, lengthSquared: lengthSquared };
  }

  function widthIndex(dK) {
    const e = Math.round(Math.log2(dK));
    if (!(e >= 0 && e < WIDTHS && 2 ** e === dK)) throw new RangeError(`d_k must be a power of 2 from 1 to 4096, got ${dK}`);
    return e;
  }

  /** Row r of a draw at width d_k, as logits z = c·s (into `out` if given) and its g. */
  function row(draw, r, dK, c, out) {
    const n = draw.n;
    const z = out || new Float64Array(n);
    const factor = c * Math.sqrt(draw.lengthSquared[r * WIDTHS + widthIndex(dK)]);
    for (let j = 0; j < n; j++) z[j] = factor * draw.normals[r * n + j];
    return { z: z, g: draw.g.subarray(r * n, (r + 1) * n) };
  }

  /** The multiplier c of the logits z = c·s. */
  function multiplier(kind, dK, free) {
    if (kind === "none") return 1;
    if (kind === "sqrt") return 1 / Math.sqrt(dK);
    if (kind === "lin") return 1 / dK;
    return free;
  }

  function quantile(values, level) {
    const sorted = Float64Array.from(values).sort();
    const position = level * (sorted.length - 1); // linear interpolation, as torch.quantile
    const below = Math.floor(position);
    const above = Math.min(below + 1, sorted.length - 1);
    return sorted[below] + (position - below) * (sorted[above] - sorted[below]);
  }

  const DEAD_ROW = 1e-3; // chapter 3's "dead" row: a gradient norm below 1e-3
  const GROUP = 128; // chapter 3 takes the median of each seed's 128 rows, then the mean over seeds

  function mean(values) {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[i];
    return sum / values.length;
  }

  /** The median row gradient as chapter 3 computes it: the median of each group of 128 rows (one
   * seed's queries there), averaged over the groups. Row gradients spread over many decades once rows
   * saturate, and this mean of medians is not the median of all rows: the same estimator is compared. */
  function groupedMedian(values) {
    const groups = Math.max(1, Math.floor(values.length / GROUP));
    const size = Math.min(GROUP, values.length);
    let sum = 0;
    for (let k = 0; k < groups; k++) sum += quantile(values.subarray(k * size, (k + 1) * size), 0.5);
    return sum / groups;
  }

  /** The explorer's averages over every row of a draw at width d_k, for each multiplier in `cs`:
   * the mean entropy, largest weight and ||J||_2, the median row gradient (as chapter 3 takes it),
   * the share of dead rows, and the per-row values themselves. */
  function summarize(draw, dK, cs) {
    const z = new Float64Array(draw.n);
    return cs.map((c) => {
      const values = {
        entropy: new Float64Array(draw.rows),
        largest: new Float64Array(draw.rows),
        jacobianNorm: new Float64Array(draw.rows),
        gradNorm: new Float64Array(draw.rows),
      };
      for (let r = 0; r < draw.rows; r++) {
        const { g } = row(draw, r, dK, c, z);
        const p = softmax(z);
        values.entropy[r] = entropy(p);
        values.largest[r] = largest(p);
        values.jacobianNorm[r] = jacobianNorm(p);
        values.gradNorm[r] = norm(rowGradient(p, g));
      }
      let dead = 0;
      for (let r = 0; r < draw.rows; r++) if (values.gradNorm[r] < DEAD_ROW) dead += 1;
      return {
        entropy: mean(values.entropy),
        largest: mean(values.largest),
        jacobianNorm: mean(values.jacobianNorm),
        gradMedian: groupedMedian(values.gradNorm),
        dead: dead / draw.rows,
        rows: values,
      };
    });
  }

  const api = {
    DEAD_ROW: DEAD_ROW,
    softmax: softmax,
    entropy: entropy,
    largest: largest,
    jacobianNorm: jacobianNorm,
    rowGradient: rowGradient,
    norm: norm,
    rowStatistics: rowStatistics,
    generator: generator,
    drawRows: drawRows,
    row: row,
    multiplier: multiplier,
    quantile: quantile,
    groupedMedian: groupedMedian,
    GROUP: GROUP,
    summarize: summarize,
  };
  root.ScaleExplorerMath = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof self !== "undefined" ? self : this);
