/**
 * `npm run bench:check` (issue 37): the guard that keeps the engine fast. In one process, on one
 * generated stream (the bench's own generator) held in memory:
 * - the floor: `JSON.parse` of every line (what any reader of the log pays);
 * - the engine with every signal off (routing, pairing calls with their results, each call's hash);
 * - the engine with every signal on; and with each signal alone.
 * Each pass is timed in CPU time (the process's, user + system: the machine's other work costs
 * less of it than of the wall clock), the configurations interleaved with the floor so that a busy
 * spell falls on all of them alike, and each figure is the median, over REPS repetitions, of its
 * time divided by the floor's in the same repetition: a ratio, not seconds, so that it means the
 * same on a fast machine and a slow one.
 *
 * The figures: the signals' share (every signal on, less every signal off) and each signal's own
 * (it alone on, less every signal off), both in floors. `--check` fails (exit 1) when the signals'
 * share is more than MARGIN above the one recorded in bench/baseline.json. Each signal's own line
 * is printed beside its recorded figure, not judged: it is the difference of two passes a tenth
 * of the whole's size, and on a loaded machine (runs at a load of 13 to 22 on 2 cores) it moved
 * by more than itself from run to run (docs/design.md, "The guard").
 * `--record` writes the figures measured as the new baseline (after a change that is meant to
 * cost, say why in its commit).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig, SIGNAL_IDS, type GuardianConfig, type SignalId } from '../src/core/config';
import { Engine } from '../src/core/engine';
import type { LocatedEvent } from '../src/core/events';
import { EventLogReader } from '../src/watch/eventLog';
import { median } from './stats';

export const BASELINE = path.resolve(__dirname, '..', '..', 'bench', 'baseline.json');
export const MARGIN = 0.1;

export interface Figures {
  /** Events in the stream measured. */
  readonly events: number;
  /** The signals' share of a replay's engine time, in floors (every signal on, less every signal off). */
  readonly signals: number;
  /** The engine with every signal off, in floors. */
  readonly bare: number;
  /** Each signal alone, less every signal off, in floors. */
  readonly perSignal: Readonly<Record<string, number>>;
}

export interface Baseline extends Figures {
  readonly recorded: string;
  readonly note: string;
  /** The figures in instructions (bench/instructions.ts), the ones judged where valgrind is. */
  readonly instructions?: { readonly events: number; readonly signals: number; readonly bare: number; readonly first?: number; readonly node: string; readonly method?: string };
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export function only(signal: SignalId | 'all' | 'none'): GuardianConfig {
  const config = defaultConfig();
  for (const id of SIGNAL_IDS) config.signals[id].enabled = signal === 'all' || signal === id;
  return config;
}

/** One pass of the engine over the events; its CPU ms. */
function enginePass(events: readonly LocatedEvent[], config: GuardianConfig): number {
  const t0 = cpuMs();
  const engine = new Engine(config);
  let findings = 0;
  for (const e of events) findings += engine.push(e).length;
  findings += engine.flush().length;
  const ms = cpuMs() - t0;
  // Read, so that no pass is optimised away.
  if (findings < 0) throw new Error('unreachable');
  return ms;
}

function floorPass(lines: readonly string[]): number {
  const t0 = cpuMs();
  let n = 0;
  for (const l of lines) if (JSON.parse(l) !== null) n++;
  const ms = cpuMs() - t0;
  if (n !== lines.length) throw new Error('a line of the stream did not parse');
  return ms;
}

/** The stream's lines, and its events as the event-log reader makes them, held in memory. */
export function loadStream(file: string): { lines: string[]; events: LocatedEvent[] } {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').filter((l) => l !== '');
  const events: LocatedEvent[] = [];
  // Read whole, as from a pipe: the file reader's slices of about 2 ms (logTail.ts) end where the
  // clock says, so under valgrind, 50 times slower, each process read in other slices and counted
  // up to 18 M instructions more or less than the same process before (docs/design.md, "The guard").
  new EventLogReader(file, path.basename(file)).readAll(text, { event: (e: LocatedEvent) => events.push(e), skipped: () => undefined });
  return { lines, events };
}

/**
 * Measures the figures on `file` (a stream of the bench's generator): `reps` interleaved
 * repetitions, medians of ratios. `perSignal: false` times only every signal off and every signal
 * on (the figure judged), in a fifth of the time: `perSignal` is then empty.
 */
export function measure(file: string, reps: number, log: (s: string) => void = () => undefined, perSignal = true): Figures {
  const { lines, events } = loadStream(file);
  const configs: (SignalId | 'all' | 'none')[] = ['none', 'all', ...(perSignal ? SIGNAL_IDS : [])];
  const ratios = new Map<string, number[]>(configs.map((c) => [c, []]));
  // A first pass of each, unmeasured: the code is compiled and warm before any figure is taken.
  floorPass(lines);
  for (const c of configs) enginePass(events, only(c));
  for (let r = 0; r < reps; r++) {
    for (const c of r % 2 === 0 ? configs : [...configs].reverse()) {
      // The floor just before each pass, and just after: the pass is held to the two's mean.
      const before = floorPass(lines);
      const ms = enginePass(events, only(c));
      const after = floorPass(lines);
      (ratios.get(c) as number[]).push(ms / ((before + after) / 2));
    }
    log(`  repetition ${r + 1} of ${reps}`);
  }
  const m = (c: string) => median(ratios.get(c) as number[]);
  // Each difference taken per repetition, then the median: a busy spell in one repetition moves one value only.
  const diff = (c: string) => median((ratios.get(c) as number[]).map((v, i) => v - ((ratios.get('none') as number[])[i] as number)));
  return { events: events.length, signals: diff('all'), bare: m('none'), perSignal: perSignal ? Object.fromEntries(SIGNAL_IDS.map((id) => [id, diff(id)])) : {} };
}

export function readBaseline(): Baseline | undefined {
  return existsSync(BASELINE) ? (JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline) : undefined;
}

export function writeBaseline(f: Figures, note: string, instructions?: Baseline['instructions']): void {
  const baseline: Baseline = { ...f, recorded: new Date().toISOString(), note, ...(instructions !== undefined ? { instructions } : {}) };
  // Three decimals: the figures move by more than that from run to run.
  writeFileSync(BASELINE, `${JSON.stringify(baseline, (_key, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2)}\n`);
}

/** The most a signals' share may be against the one recorded (in time or in instructions): the margin over it. */
export function limitOf(recorded: number | undefined): number | undefined {
  return recorded !== undefined ? recorded * (1 + MARGIN) : undefined;
}

/** A figure in floors, as printed. */
export const times = (v: number): string => `${v.toFixed(2)}×`;

/** The lines to print, and whether the figures pass against the baseline. */
export function judge(f: Figures, base: Baseline | undefined): { lines: string[]; ok: boolean } {
  const lines: string[] = [];
  const limit = limitOf(base?.signals);
  const ok = limit === undefined || f.signals <= limit;
  lines.push(`the signals' share of the engine (every signal on less every signal off): ${times(f.signals)} the floor${base ? `; recorded ${times(base.signals)}, limit ${times(limit as number)}: ${ok ? 'ok' : 'SLOWER'}` : ''}`);
  lines.push(`the engine with every signal off: ${times(f.bare)} the floor${base ? `; recorded ${times(base.bare)} (not checked)` : ''}`);
  if (Object.keys(f.perSignal).length > 0) lines.push('each signal alone (it alone on less every signal off; not judged: see bench/check.ts):');
  for (const id of SIGNAL_IDS) {
    if (f.perSignal[id] === undefined) continue;
    const recorded = base?.perSignal[id];
    // A new signal has no recorded line until the baseline is recorded again (--record).
    lines.push(`  ${id.padEnd(20)} ${times(f.perSignal[id] as number)}${recorded !== undefined ? `; recorded ${times(recorded)}` : base ? '; no recorded figure (record one with --record)' : ''}`);
  }
  return { lines, ok };
}
