// Where Hugo fits on this machine: its peak memory grows linearly with the profiles (3.8 GB at
// 100,000, 10.5 GB at 300,000, issue 31), so before each size the benchmark predicts it from the
// largest size measured and skips a size that would not fit, rather than swap or be killed.

/** The share of the machine's memory a predicted peak may take: the rest is the system's and the benchmark's. */
export const HUGO_MEMORY_SHARE = 0.8;

/** With one size only, Hugo runs at the largest of these (and the size) predicted to fit, measured first at the smallest. */
export const HUGO_LADDER = [100_000, 300_000];

export interface HugoPeak { n: number; peakMb: number }

/** Hugo's peak at `n` profiles by linear growth (MB per profile) from the largest size measured; undefined before any. */
export function predictHugoMb(measured: readonly HugoPeak[], n: number): number | undefined {
  const largest = measured.reduce<HugoPeak | undefined>((a, r) => (!a || r.n > a.n ? r : a), undefined);
  return largest && (largest.peakMb / largest.n) * n;
}

/** Whether Hugo is to run at `n`: yes before any measurement, else when the prediction is within HUGO_MEMORY_SHARE of `totalMb`. */
export function hugoFits(measured: readonly HugoPeak[], n: number, totalMb: number): { fits: boolean; predictedMb?: number } {
  const predictedMb = predictHugoMb(measured, n);
  return { fits: predictedMb === undefined || predictedMb <= HUGO_MEMORY_SHARE * totalMb, predictedMb };
}

/** The report's sentence for a size Hugo skips: `Hugo: not run at 1,000,000: predicted 38.0 GB of 24 GB`. */
export const hugoSkipped = (n: number, predictedMb: number, totalMb: number) =>
  `Hugo: not run at ${n.toLocaleString('en')}: predicted ${(predictedMb / 1024).toFixed(1)} GB of ${Math.round(totalMb / 1024)} GB`;

/**
 * With a single size above the ladder's first rung: that rung, run first (a fresh clone of ours and
 * Hugo), the base of Hugo's predictions and of the step table's ratios. After it, `nextHugoOnly`
 * says whether another rung below the size is worth Hugo's run: the largest that fits, when the
 * size itself does not.
 */
export const firstRung = (sizes: readonly number[]): number[] => (sizes.length === 1 && sizes[0]! > HUGO_LADDER[0]! ? [HUGO_LADDER[0]!] : []);

export function nextHugoOnly(size: number, measured: readonly HugoPeak[], totalMb: number): number | undefined {
  if (hugoFits(measured, size, totalMb).fits) return undefined; // Hugo runs at the size itself
  const done = new Set(measured.map((r) => r.n));
  return [...HUGO_LADDER].reverse().find((n) => n < size && !done.has(n) && hugoFits(measured, n, totalMb).fits);
}
