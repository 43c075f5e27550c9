/**
 * A small Prometheus registry (counters, gauges, histograms) and its text exposition, format 0.0.4.
 * Label sets are fixed per family and every value a caller passes is a bounded name (a subsystem, a
 * method, a status class, a script or pool name): never a raw path or a request id.
 */

type Labels = Record<string, string>;

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

/** Latency buckets in seconds: 1 ms to 10 s, Prometheus's defaults with a 1 ms floor. */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function renderLabels(names: readonly string[], values: readonly string[], extra?: string): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? '')}"`);
  if (extra) pairs.push(extra);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function renderNumber(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return Number.isNaN(value) ? 'NaN' : String(value);
}

abstract class LabelledFamily<T> implements Family {
  abstract readonly type: Family['type'];
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { values: string[]; state: T }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  protected slot(labels: Labels, initial: () => T): T {
    const values = this.labelNames.map((name) => labels[name] ?? '');
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (!entry) {
      entry = { values, state: initial() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  /** Drops every series (gauges refilled on each scrape forget what no longer exists). */
  reset(): void {
    this.series.clear();
  }

  abstract render(): string[];
}

export class Counter extends LabelledFamily<{ value: number }> {
  readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    this.slot(labels, () => ({ value: 0 })).value += by;
  }

  /** The current value of one series (tests, and collectors that derive from it). */
  get(labels: Labels = {}): number {
    return this.slot(labels, () => ({ value: 0 })).value;
  }

  render(): string[] {
    return [...this.series.values()].map(
      ({ values, state }) => `${this.name}${renderLabels(this.labelNames, values)} ${renderNumber(state.value)}`,
    );
  }
}

export class Gauge extends LabelledFamily<{ value: number }> {
  readonly type = 'gauge';

  set(labels: Labels, value: number): void {
    this.slot(labels, () => ({ value: 0 })).value = value;
  }

  render(): string[] {
    return [...this.series.values()].map(
      ({ values, state }) => `${this.name}${renderLabels(this.labelNames, values)} ${renderNumber(state.value)}`,
    );
  }
}

interface HistogramState {
  /** Non-cumulative count per bucket; the last slot is +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends LabelledFamily<HistogramState> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[] = LATENCY_BUCKETS) {
    super(name, help, labelNames);
    this.buckets = buckets;
  }

  #state(labels: Labels): HistogramState {
    return this.slot(labels, () => ({ counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 }));
  }

  observe(labels: Labels, value: number): void {
    const state = this.#state(labels);
    let index = this.buckets.findIndex((bound) => value <= bound);
    if (index < 0) index = this.buckets.length;
    state.counts[index]! += 1;
    state.sum += value;
    state.count += 1;
  }

  /** Adds observations counted elsewhere (workerd isolates) with the same buckets, non-cumulative. */
  add(labels: Labels, counts: readonly number[], sum: number): void {
    const state = this.#state(labels);
    counts.forEach((n, i) => {
      if (i < state.counts.length) state.counts[i]! += n;
    });
    state.sum += sum;
    state.count += counts.reduce((a, b) => a + b, 0);
  }

  render(): string[] {
    const lines: string[] = [];
    for (const { values, state } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += state.counts[i]!;
        lines.push(
          `${this.name}_bucket${renderLabels(this.labelNames, values, `le="${renderNumber(bound)}"`)} ${cumulative}`,
        );
      });
      lines.push(`${this.name}_bucket${renderLabels(this.labelNames, values, 'le="+Inf"')} ${state.count}`);
      lines.push(`${this.name}_sum${renderLabels(this.labelNames, values)} ${renderNumber(state.sum)}`);
      lines.push(`${this.name}_count${renderLabels(this.labelNames, values)} ${state.count}`);
    }
    return lines;
  }
}

/** The families of one process and the collectors that refresh gauges when scraped. */
export class MetricsRegistry {
  readonly #families = new Map<string, Family>();
  readonly #collectors: (() => Promise<void> | void)[] = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  /** Runs before every exposition (gauges read at scrape time; figures pulled from workerd). */
  onCollect(collector: () => Promise<void> | void): void {
    this.#collectors.push(collector);
  }

  /** The text exposition (Content-Type `text/plain; version=0.0.4`). A failing collector leaves its figures stale. */
  async expose(onError?: (error: unknown) => void): Promise<string> {
    await Promise.all(
      this.#collectors.map(async (collect) => {
        try {
          await collect();
        } catch (error) {
          onError?.(error);
        }
      }),
    );
    const lines: string[] = [];
    for (const family of this.#families.values()) {
      lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${family.name} ${family.type}`);
      lines.push(...family.render());
    }
    return `${lines.join('\n')}\n`;
  }

  #add<T extends Family>(family: T): T {
    if (this.#families.has(family.name)) throw new Error(`metric ${family.name} is registered twice`);
    this.#families.set(family.name, family);
    return family;
  }
}
