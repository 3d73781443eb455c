/**
 * The guard's figure in instructions (issue 37): what `npm run bench:check` judges when valgrind is
 * on the machine. Timing cannot tell a 10 % change from noise here (docs/design.md, "The guard": one
 * measure of the same build moves by ±15 % on a quiet machine, more under load); the instructions a
 * process executes, counted by valgrind's cachegrind, do not: with V8 on one thread, its seeds
 * fixed and its collector's sizes too (V8_FLAGS) the same build's signals' share came out within
 * 5 % from run to run, beside a CI run or not (docs/design.md, "The guard"). The same practice as SQLite's speed checks and rustc's
 * performance dashboard: instructions as the figure a change is held to, time as the one users feel.
 *
 * Four processes on the same stream, each counted whole: `base` (Node's start and reading the
 * stream into events), `floor` (base, then JSON.parse of every line FLOOR_PASSES times), `none`
 * (base, then the engine with every signal off), `all` (base, then every signal on). The figures,
 * in floors (one pass of JSON.parse): the signals' share, (all − none) / floor, and the engine with
 * every signal off, (none − base) / floor.
 */
import { execFile, execFileSync } from 'node:child_process';
import { Engine } from '../src/core/engine';
import { loadStream, only } from './check';

const FLOOR_PASSES = 3;
/**
 * V8 on one thread with its seeds fixed, and none of its collector's decisions taken from the
 * clock: V8 sizes its heap from how fast the program allocated and collected (time), and its
 * memory reducer runs on a timer, so under valgrind (50 times slower, and slower still on a busy
 * machine) the same program collected at other moments: the engine with every signal off counted
 * 393 M instructions here and 425 M on the same build during a CI run. Fixed generations and no
 * memory reducer take the clock out.
 */
const V8_FLAGS = ['--single-threaded', '--hash-seed=1', '--random-seed=1', '--no-memory-reducer', '--min-semi-space-size=16', '--max-semi-space-size=16', '--initial-old-space-size=512'];
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
  const args = ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, ...V8_FLAGS, __filename, '--child', file, mode];
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
  const { lines, events } = await loadStream(file);
  let n = 0;
  if (mode === 'floor') for (let r = 0; r < FLOOR_PASSES; r++) for (const l of lines) if (JSON.parse(l) !== null) n++;
  if (mode === 'none' || mode === 'all') {
    const engine = new Engine(only(mode));
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
