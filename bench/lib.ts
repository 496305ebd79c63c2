/**
 * Benchmark plumbing shared by every `npm run bench:*`: repeat a measurement, summarise it, print
 * a table with ratios against a baseline measured in the same process, and, with `--json`, end with
 * one JSON object on the last line so a program can read the numbers.
 */

export interface Summary {
  name: string;
  samples: number[];
  median: number;
  p99: number;
  min: number;
  max: number;
}

export function summarise(name: string, samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { name, samples, median: at(0.5), p99: at(0.99), min: sorted[0] ?? NaN, max: sorted.at(-1) ?? NaN };
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

const fmt = (n: number) =>
  Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : "–";

/** Print the summaries as a table; `ratio` is each row's median over the baseline row's median. */
export function printTable(
  title: string,
  rows: Summary[],
  { unit = "ms", baseline }: { unit?: string; baseline?: string } = {},
): void {
  const base = rows.find((r) => r.name === baseline);
  const header = [
    "case",
    `median ${unit}`,
    `p99 ${unit}`,
    `min ${unit}`,
    `max ${unit}`,
    "runs",
    ...(base ? [`× vs ${base.name}`] : []),
  ];
  const body = rows.map((r) => [
    r.name,
    fmt(r.median),
    fmt(r.p99),
    fmt(r.min),
    fmt(r.max),
    String(r.samples.length),
    ...(base ? [fmt(base.median / r.median)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of body) console.log(line(row));
}

export const wantsJson = (): boolean => process.argv.includes("--json");

/** The machine-readable result: one JSON object, the last line of output. */
export function printJson(result: Record<string, number | string | boolean | null>): void {
  console.log(JSON.stringify(result));
}
