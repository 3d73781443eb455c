/**
 * The guard's figure in instructions (issue 37): what `npm run bench:check` judges when valgrind is
 * on the machine. Timing cannot tell a 10 % change from noise here (docs/design.md, "The guard": one
 * measure of the same build moves by ±15 % on a quiet machine, more under load); the instructions a
 * process executes, counted by valgrind's cachegrind, do not: with V8 on one thread, its seeds
 * fixed and its collector's sizes too (V8_FLAGS), the stream read with no clock in it and collected
 * before any pass, four counts of one build agreed to 0.02 % (docs/design.md, "The guard"). The
 * same practice as SQLite's speed checks and rustc's performance dashboard: instructions as the
 * figure a change is held to, time as the one users feel.
 *
 * Six processes on the same stream, each counted whole: Node's start, reading the stream into
 * events and collecting what the reading left, then `floor` (a pass of JSON.parse of every line),
 * `none` (a pass of the engine with every signal off), `all` (a pass with every signal on), and
 * each again with its warm passes: FLOOR_WARM more passes of JSON.parse, WARM_PASSES more of the
 * engine, each with a new engine. Every figure is the difference of two processes that do the same
 * until their last passes, so what is counted is those passes alone.
 *
 * The figure judged is a warm pass's: the signals' share of the passes after the first,
 * ((all+ − all) − (none+ − none)) / WARM_PASSES, in floors, and the floor is a warm pass's too,
 * (floor+ − floor) / FLOOR_WARM. With V8 on one thread, the first pass of the engine also
 * optimises its code, in the counted thread: at 20,000 events, that compiling was more than half of
 * the signals' share (441 M instructions of V8's optimising compiler in 811 M, against 77 M in the
 * code it made), so that a change that made the signals faster and compiled one more function
 * counted as slower. A replay of any length, and the editor and the receiver, spend their time in
 * warm passes, and Node compiles on a thread of its own. The first pass's share, (all − none) /
 * floor, is printed beside it, not judged (what the hook's first call costs is hook.bench's). The
 * engine with every signal off: a warm pass's, (none+ − none) / WARM_PASSES / floor.
 *
 * Until 2026-11-29 (evening) the floor was three passes of JSON.parse less a process that only read
 * the stream: a difference of two processes that differed by more than the passes (the first
 * passes also moved what the reading had left into the old generation), and that carried as much
 * of the figure's spread as the signals did (docs/design.md, "The guard").
 */
import { execFile, execFileSync } from 'node:child_process';
import { Engine } from '../src/core/engine';
import { loadStream, only } from './check';

/** The passes of JSON.parse after the first in `floor+`: a pass of the floor is a sixth of their count. */
export const FLOOR_WARM = 6;
/**
 * V8 on one thread with its seeds fixed, and none of its collector's decisions taken from the
 * clock: V8 sizes its heap from how fast the program allocated and collected (time), and its
 * memory reducer runs on a timer, so under valgrind (50 times slower, and slower still on a busy
 * machine) the same program collected at other moments: the engine with every signal off counted
 * 393 M instructions here and 425 M on the same build during a CI run. Fixed generations and no
 * memory reducer take the clock out. `--expose-gc`: the child collects what reading the stream left
 * before any pass, so that no pass pays for moving it to the old generation.
 */
const V8_FLAGS = ['--expose-gc', '--single-threaded', '--hash-seed=1', '--random-seed=1', '--no-memory-reducer', '--min-semi-space-size=16', '--max-semi-space-size=16', '--initial-old-space-size=512'];
const MODES = ['floor', 'none', 'all'] as const;
type Mode = (typeof MODES)[number];
/** The passes after the first in the `+` processes: the warm passes counted. */
export const WARM_PASSES = 2;
/** How the figure judged is counted, as the baseline records it (a figure counted another way is not compared). */
export const INSTRUCTION_METHOD = 'warm passes, warm floor';

export interface InstructionFigures {
  /** Events in the stream counted. */
  readonly events: number;
  /** The signals' share of a warm pass of the engine, in floors (the figure judged). */
  readonly signals: number;
  /** A warm pass of the engine with every signal off, in floors. */
  readonly bare: number;
  /** The signals' share of the first pass, compiling included, in floors (printed, not judged). */
  readonly first: number;
  /** Each process's count, for the record (`none+`, `all+`: with the warm passes). */
  readonly counts: Readonly<Record<Mode | 'floor+' | 'none+' | 'all+', number>>;
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
function count(file: string, mode: Mode, passes = 1): Promise<number> {
  const args = ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, ...V8_FLAGS, __filename, '--child', file, mode, String(passes)];
  return new Promise((resolve, reject) => {
    execFile('valgrind', args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      // cachegrind's summary, on stderr: "==pid== I   refs:      1,396,174,122"
      const m = /I\s+refs:\s+([\d,]+)/.exec(stderr);
      if (err !== null || m === null) reject(new Error(`valgrind on the ${mode} pass: ${err?.message ?? 'no instruction count in its output'}\n${stderr.slice(-2000)}`));
      else resolve(Number((m[1] as string).replace(/,/g, '')));
    });
  });
}

/** Counts the six processes (two at a time: the counts do not depend on what runs beside them) and derives the figures. */
export async function countFigures(file: string, events: number): Promise<InstructionFigures> {
  const [floor, floorWarm] = await Promise.all([count(file, 'floor'), count(file, 'floor', 1 + FLOOR_WARM)]);
  const [none, all] = await Promise.all([count(file, 'none'), count(file, 'all')]);
  const [noneWarm, allWarm] = await Promise.all([count(file, 'none', 1 + WARM_PASSES), count(file, 'all', 1 + WARM_PASSES)]);
  const onePass = (floorWarm - floor) / FLOOR_WARM;
  const warm = (more: number, one: number) => (more - one) / WARM_PASSES;
  return {
    events,
    signals: (warm(allWarm, all) - warm(noneWarm, none)) / onePass,
    bare: warm(noneWarm, none) / onePass,
    first: (all - none) / onePass,
    counts: { floor, 'floor+': floorWarm, none, all, 'none+': noneWarm, 'all+': allWarm },
  };
}

/** The child: reads the stream, then does what its mode says `passes` times; nothing printed (the count is the output). */
function child(file: string, mode: Mode, passes: number): void {
  const { lines, events } = loadStream(file);
  // What the reading left, collected (and the events moved to the old generation) before any pass.
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('the counted child runs with --expose-gc');
  collect();
  collect();
  let n = 0;
  if (mode === 'floor') for (let r = 0; r < passes; r++) for (const l of lines) if (JSON.parse(l) !== null) n++;
  if (mode === 'none' || mode === 'all') {
    for (let pass = 0; pass < passes; pass++) {
      // A new engine each pass: the same work again, with the code already optimised.
      const engine = new Engine(only(mode));
      for (const e of events) n += engine.push(e).length;
      n += engine.flush().length;
    }
  }
  // Read, so that no pass is optimised away.
  if (n < 0) throw new Error('unreachable');
}

if (require.main === module && process.argv[2] === '--child') {
  const mode = process.argv[4] as Mode;
  if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);
  child(process.argv[3] as string, mode, Number(process.argv[5] ?? 1));
}
