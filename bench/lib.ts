/**
 * Benchmark plumbing shared by every `npm run bench:*`: repeat a measurement, summarise it, print
 * a table with ratios against a baseline measured in the same process, and, with `--json`, end with
 * one JSON object on the last line so a program can read the numbers.
 */

/**
 * The tail a run count can support: a p99 needs at least 100 samples and a p95 at least 20 (with
 * fewer, the "percentile" is just the largest sample). Below 20 runs only the max is reported.
 */
const TAILS = [
  { label: "p99", quantile: 0.99, minRuns: 100 },
  { label: "p95", quantile: 0.95, minRuns: 20 },
] as const;

export type TailLabel = (typeof TAILS)[number]["label"] | "max";

export interface Summary {
  name: string;
  samples: number[];
  median: number;
  min: number;
  max: number;
  /** The highest percentile the run count supports, or the max when it supports none. */
  tail: { label: TailLabel; value: number };
}

/** Nearest rank: the smallest sample with at least a fraction `q` of the samples at or below it. */
function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

const supportedTail = (runs: number) => TAILS.find((t) => runs >= t.minRuns);

export function summarise(name: string, samples: number[]): Summary {
  const max = samples.length > 0 ? Math.max(...samples) : NaN;
  const tail = supportedTail(samples.length);
  return {
    name,
    samples,
    median: quantile(samples, 0.5),
    min: samples.length > 0 ? Math.min(...samples) : NaN,
    max,
    tail: tail ? { label: tail.label, value: quantile(samples, tail.quantile) } : { label: "max", value: max },
  };
}

/** The summary's tail as a JSON entry named for what it is: `<prefix>_p99`, `<prefix>_p95` or `<prefix>_max`. */
export function tailEntry(prefix: string, summary: Summary, digits = 2): Record<string, number> {
  return { [`${prefix}_${summary.tail.label}`]: Number(summary.tail.value.toFixed(digits)) };
}

/** Run `fn` `runs` times (after `warmup` unmeasured runs) and return the wall times in `unit`. */
export async function measure(
  name: string,
  fn: () => Promise<unknown> | unknown,
  {
    runs = 5,
    warmup = 1,
    unit = "ms" as "ms" | "us",
    before,
  }: { runs?: number; warmup?: number; unit?: "ms" | "us"; before?: () => Promise<unknown> | unknown } = {},
): Promise<Summary> {
  const scale = unit === "ms" ? 1e6 : 1e3;
  for (let i = 0; i < warmup; i++) {
    await before?.();
    await fn();
  }
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    await before?.();
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / scale);
  }
  return summarise(name, samples);
}

/** Read the number of runs from BENCH_RUNS, so a run can be made shorter or longer. */
export function benchRuns(fallback: number): number {
  const raw = process.env.BENCH_RUNS;
  if (raw === undefined || raw === "") return fallback;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`BENCH_RUNS must be a whole number ≥ 1, not "${raw}"`);
  return runs;
}

const fmt = (n: number) =>
  Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : "–";

/** A row whose name is indented is a part of the row above it: a ratio against a whole means nothing. */
const isPart = (row: Summary) => row.name.startsWith(" ");

/**
 * Print the summaries as a table; the ratio is the baseline row's median over each row's median
 * (left blank for a part of a row, see isPart).
 * The tail column is the highest percentile every row's run count supports (see TAILS); when the
 * rows support none it is left out, since the max column already says it.
 */
export function printTable(
  title: string,
  rows: Summary[],
  { unit = "ms", baseline }: { unit?: string; baseline?: string } = {},
): void {
  const base = rows.find((r) => r.name === baseline);
  const fewest = Math.min(...rows.map((r) => r.samples.length));
  const tail = supportedTail(fewest);
  const header = [
    "case",
    `median ${unit}`,
    ...(tail ? [`${tail.label} ${unit}`] : []),
    `min ${unit}`,
    `max ${unit}`,
    "runs",
    ...(base ? [`× vs ${base.name.trim()}`] : []),
  ];
  const body = rows.map((r) => [
    r.name,
    fmt(r.median),
    ...(tail ? [fmt(quantile(r.samples, tail.quantile))] : []),
    fmt(r.min),
    fmt(r.max),
    String(r.samples.length),
    ...(base ? [isPart(r) ? "" : fmt(base.median / r.median)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of body) console.log(line(row));
  if (!tail) console.log(`(${fewest} runs: too few for a p95, which needs ${TAILS.at(-1)!.minRuns}; see max)`);
}

export const wantsJson = (): boolean => process.argv.includes("--json");

/** The machine-readable result: one JSON object, the last line of output. */
export function printJson(result: Record<string, number | string | boolean | null>): void {
  console.log(JSON.stringify(result));
}
