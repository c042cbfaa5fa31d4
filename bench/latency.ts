/**
 * @module bench/latency
 * A bounded recorder of latencies in milliseconds and the summary every benchmark reports:
 * count, p50, p99, mean and max (exact percentiles over the recorded samples).
 */

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Samples beyond this many are counted but not kept (memory stays bounded). */
const MAX_SAMPLES = 2_000_000;

export class LatencyRecorder {
  #samples = new Float64Array(1024);
  #n = 0;
  #dropped = 0;

  record(ms: number): void {
    if (this.#n >= MAX_SAMPLES) {
      this.#dropped++;
      return;
    }
    if (this.#n === this.#samples.length) {
      const bigger = new Float64Array(Math.min(MAX_SAMPLES, this.#samples.length * 2));
      bigger.set(this.#samples);
      this.#samples = bigger;
    }
    this.#samples[this.#n++] = ms;
  }

  get count(): number {
    return this.#n + this.#dropped;
  }

  summary(): LatencySummary {
    const n = this.#n;
    if (n === 0) return { count: 0, p50: NaN, p99: NaN, mean: NaN, max: NaN };
    const sorted = this.#samples.slice(0, n).sort();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i] as number;
    return {
      count: this.count,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      mean: sum / n,
      max: sorted[n - 1] as number,
    };
  }
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}
