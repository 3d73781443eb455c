/**
 * The guard's figure in instructions (issue 37): what `npm run bench:check` judges when valgrind is
 * on the machine. Timing cannot tell a 10 % change from noise here (docs/design.md, "The guard": one
 * measure of the same build moves by ±15 % on a quiet machine, more under load); the instructions a
 * process executes, counted by valgrind's cachegrind, do not: with V8 on one thread and its seeds
 * fixed (`--single-threaded --hash-seed --random-seed`) the same build counts the same to within
 * 0.1 % (measured: 1,396,174,122 and 1,396,141,853 for a process that only reads the stream),
 * whatever else the machine is doing. The same practice as SQLite's speed checks and rustc's
 * performance dashboard: instructions as the figure a change is held to, time as the one users feel.
 *
 * Four processes on the same stream, each counted whole: `base` (Node's start and reading the
 * stream into events), `floor` (base, then JSON.parse of every line FLOOR_PASSES times), `none`
 * (base, then the engine with every signal off), `all` (base, then every signal on). The figures,
 * in floors (one pass of JSON.parse): the signals' share, (all − none) / floor, and the engine with
 * every signal off, (none − base) / floor.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig, SIGNAL_IDS } from '../src/core/config';
import { Engine } from '../src/core/engine';
import type { LocatedEvent } from '../src/core/events';
import { EventLogReader } from '../src/watch/eventLog';

const FLOOR_PASSES = 3;
const MODES = ['base', 'floor', 'none', 'all'] as const;
type Mode = (typeof MODES)[number];

export interface InstructionFigures {
  /** Events in the stream counted. */
  readonly events: number;
  /** The signals' share of the engine's instructions, in floors. */
  readonly signals: number;
  /** The engine with every signal off, in floors. */
  readonly bare: number;
  /** Each process's count, for the record. */
  readonly counts: Readonly<Record<Mode, number>>;
}

/** Whether valgrind can be run here. */
export function haveValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The instructions of one process in `mode` on `file`, as cachegrind counts them. */
function count(file: string, mode: Mode): Promise<number> {
  const args = ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, '--single-threaded', '--hash-seed=1', '--random-seed=1', __filename, '--child', file, mode];
  return new Promise((resolve, reject) => {
    execFile('valgrind', args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      // cachegrind's summary, on stderr: "==pid== I   refs:      1,396,174,122"
      const m = /I\s+refs:\s+([\d,]+)/.exec(stderr);
      if (err !== null || m === null) reject(new Error(`valgrind on the ${mode} pass: ${err?.message ?? 'no instruction count in its output'}\n${stderr.slice(-2000)}`));
      else resolve(Number((m[1] as string).replace(/,/g, '')));
    });
  });
}

/** Counts the four processes (two at a time: the counts do not depend on what runs beside them) and derives the figures. */
export async function countFigures(file: string, events: number): Promise<InstructionFigures> {
  const [base, floor] = await Promise.all([count(file, 'base'), count(file, 'floor')]);
  const [none, all] = await Promise.all([count(file, 'none'), count(file, 'all')]);
  const onePass = (floor - base) / FLOOR_PASSES;
  return { events, signals: (all - none) / onePass, bare: (none - base) / onePass, counts: { base, floor, none, all } };
}

/** The child: reads the stream, then does what its mode says; nothing printed (the count is the output). */
async function child(file: string, mode: Mode): Promise<void> {
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
  const events: LocatedEvent[] = [];
  const reader = new EventLogReader(file, path.basename(file));
  const sink = { event: (e: LocatedEvent) => events.push(e), skipped: () => undefined };
  await reader.read(sink);
  reader.finish(sink);
  let n = 0;
  if (mode === 'floor') for (let r = 0; r < FLOOR_PASSES; r++) for (const l of lines) if (JSON.parse(l) !== null) n++;
  if (mode === 'none' || mode === 'all') {
    const config = defaultConfig();
    for (const id of SIGNAL_IDS) config.signals[id].enabled = mode === 'all';
    const engine = new Engine(config);
    for (const e of events) n += engine.push(e).length;
    n += engine.flush().length;
  }
  // Read, so that no pass is optimised away.
  if (n < 0) throw new Error('unreachable');
}

if (require.main === module && process.argv[2] === '--child') {
  const mode = process.argv[4] as Mode;
  if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);
  child(process.argv[3] as string, mode).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
