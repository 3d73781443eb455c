import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync } from 'node:fs';
import { dirname, join, relative as relativePath, resolve as resolvePath, sep } from 'node:path';
import { writeFileAtomic } from './atomicFile';
import { isWithin, WorkspaceEscapeError } from './containment';
import { appendToRegularFile, statOrUndefined } from './regularFile';

export { isWithin, WorkspaceEscapeError };

/** Where the guardian keeps its files, relative to the workspace root. */
export const PATHS = {
  config: '.github/guardian/config.json',
  stopAll: '.github/guardian/STOP_ALL',
  logsDir: '.tmp/current/logs',
  invocationHistory: '.tmp/current/logs/invocation-history.json',
  guardianDir: '.tmp/guardian',
  registry: '.tmp/guardian/blocked.json',
  summaries: '.tmp/guardian/blocked',
  tasks: '.tmp/guardian/tasks',
  guardianLog: '.tmp/guardian/guardian.log',
} as const;

/** What marks a project folder, looked for at and above a folder, in this order: the guardian's own folder first, then the repository. */
export const PROJECT_MARKERS = ['.github/guardian', '.git'] as const;

/** The guardian's own folder: `init` creates it, `stop` writes in it; the first mark of a project. */
export const GUARDIAN_DIR = PROJECT_MARKERS[0];

/**
 * What else tells the project apart, between the guardian's folder and the repository: the agents'
 * hook registrations (settings files, relative to a folder; `hookRegistrationFiles` in
 * agents/hooks.ts), a folder whose file names the guardian being one. The user's home is never a
 * project by them: an agent's settings there are the person's own, not a project's.
 */
export interface ProjectClues {
  readonly registrations?: readonly string[];
  readonly home?: string;
}

/** The most folders walked up from a start; deeper paths do not occur, and a loop must end. */
const MAX_DEPTH = 64;

function* upward(start: string): Generator<string> {
  for (let dir = resolvePath(start), i = 0; i < MAX_DEPTH; i++) {
    yield dir;
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/** Settings files are small: a bigger one is no registration of ours. */
const REGISTRATION_MAX_BYTES = 1024 * 1024;

/** Whether one of the registration files in `dir` runs the guardian's hook. */
export function registersGuardianIn(dir: string, clues: ProjectClues): boolean {
  if (clues.home !== undefined && resolvePath(clues.home) === dir) return false;
  for (const rel of clues.registrations ?? []) {
    const file = join(dir, rel);
    const st = statOrUndefined(file);
    if (st === undefined || !st.isFile() || st.size > REGISTRATION_MAX_BYTES) continue;
    try {
      if (readFileSync(file, 'utf8').includes('loop-guardian')) return true;
    } catch {
      // Unreadable: not a registration the agent could run either.
    }
  }
  return false;
}

/**
 * The project a folder belongs to: the nearest folder at or above it holding `.github/guardian`,
 * else the nearest whose agent settings register the guardian's hook (`clues`), else the nearest
 * holding `.git`. The same rule for the hook and every command, so that an agent started in a
 * subfolder or in a nested repository records into, and reads the STOP_ALL of, the project whose
 * hook it runs, and `stop` run there writes that STOP_ALL. Only a folder that exists; undefined
 * when there is none.
 */
export function findProject(start: string, clues: ProjectClues = {}): string | undefined {
  for (const dir of upward(start)) if (existsSync(join(dir, GUARDIAN_DIR))) return dir;
  if (clues.registrations !== undefined) for (const dir of upward(start)) if (registersGuardianIn(dir, clues)) return dir;
  for (const dir of upward(start)) if (existsSync(join(dir, PROJECT_MARKERS[1]))) return dir;
  return undefined;
}

/**
 * Every guardian project on the path from a folder up: each folder at or above it that holds
 * `.github/guardian` or registers the guardian's hook, nearest first. An agent working anywhere
 * below one of them honours its STOP (the hook reads them all), and `stop` writes them all.
 */
export function projectsOnPath(start: string, clues: ProjectClues = {}): string[] {
  return [...upward(start)].filter((dir) => existsSync(join(dir, GUARDIAN_DIR)) || registersGuardianIn(dir, clues));
}

/**
 * The nested repository a folder is in, below its project's root: the nearest folder at or above
 * `start` and below `root` holding `.git` (a nested repository or a submodule). Agents started
 * there run that repository's hooks, not the project's. Undefined when there is none.
 */
export function nestedRepository(start: string, root: string): string | undefined {
  const top = resolvePath(root);
  for (const dir of upward(start)) {
    if (dir === top || !isWithin(top, dir)) return undefined;
    if (existsSync(join(dir, PROJECT_MARKERS[1]))) return dir;
  }
  return undefined;
}

/**
 * Makes a workspace findable as a project from its subfolders and nested repositories: creates
 * `.github/guardian/` in it, unless a folder at or above it holds one already (then that is its
 * project). True when it was created.
 */
export async function markProject(ws: Workspace): Promise<boolean> {
  for (const dir of upward(ws.root)) if (existsSync(join(dir, GUARDIAN_DIR))) return false;
  mkdirSync(await ws.resolveForWrite(GUARDIAN_DIR), { recursive: true });
  return true;
}

export class InvalidTaskIdError extends Error {
  constructor(readonly taskId: string) {
    super(`invalid task id ${JSON.stringify(taskId)}: use letters, digits, '.', '_' and '-' (at most 128, not starting with '.')`);
    this.name = 'InvalidTaskIdError';
  }
}

const TASK_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function checkTaskId(taskId: string): string {
  if (!TASK_ID.test(taskId)) throw new InvalidTaskIdError(taskId);
  return taskId;
}

/**
 * A workspace folder. Every path the guardian writes goes through `resolveForWrite`, which refuses
 * anything that lands outside the folder, through `..` or through symbolic links.
 */
export class Workspace {
  readonly root: string;
  /** The root with its links resolved: where containment is checked. */
  readonly realRoot: string;

  constructor(root: string) {
    this.root = resolvePath(root);
    try {
      this.realRoot = realpathSync(this.root);
    } catch {
      this.realRoot = this.root;
    }
  }

  /** Absolute path of a workspace-relative path, without following links (for reading). */
  path(rel: string): string {
    return resolvePath(this.root, rel);
  }

  /** Workspace-relative form of an absolute path, with forward slashes. */
  relative(abs: string): string {
    return relativePath(this.root, abs).split(sep).join('/');
  }

  /** The real location `rel` would be written at; throws WorkspaceEscapeError if it is outside. */
  async resolveForWrite(rel: string): Promise<string> {
    return this.resolveForWriteSync(rel);
  }

  /**
   * `resolveForWrite`, synchronously: a few `realpath` and `readlink` calls, which the hook makes
   * on every call and cannot wait a worker thread's turn for.
   */
  resolveForWriteSync(rel: string): string {
    let abs = resolvePath(this.root, rel);
    if (!isWithin(this.root, abs)) throw new WorkspaceEscapeError(rel, this.root);
    let probe = abs;
    // Bounded: a cycle of dangling links must not spin for ever.
    for (let hops = 0; hops < 64; hops++) {
      try {
        const real = realpathSync.native(probe);
        const final = join(real, relativePath(probe, abs));
        if (!isWithin(this.realRoot, final)) throw new WorkspaceEscapeError(rel, this.root);
        return final;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // A dangling link still says where a write through it would land.
        const link = readLinkOrUndefined(probe);
        if (link !== undefined) {
          const target = resolvePath(dirname(probe), link);
          abs = join(target, relativePath(probe, abs));
          probe = abs;
          continue;
        }
        const parent = dirname(probe);
        if (parent === probe) break;
        probe = parent;
      }
    }
    throw new WorkspaceEscapeError(rel, this.root);
  }

  /**
   * Writes `rel` atomically, keeping the mode of the file it replaces (`mode` is a new file's). Containment is checked
   * before, and again once the temp file is open and after the rename (see `writeFileAtomic`), so
   * a folder swapped for a link in between cannot carry the write outside.
   */
  async writeAtomic(rel: string, data: string, opts: { mode?: number } = {}): Promise<void> {
    await writeFileAtomic(await this.resolveForWrite(rel), data, { within: this.realRoot, name: rel, ...(opts.mode !== undefined ? { mode: opts.mode } : {}) });
  }

  /**
   * Appends to `rel` (its folders created), never blocking on a FIFO, and checked again once the
   * file is open: a folder swapped for a link in between cannot carry the line outside. With
   * `rotateOver`, a file past that many bytes is rotated first.
   */
  async append(rel: string, text: string, opts: { rotateOver?: number } = {}): Promise<void> {
    this.appendSync(rel, text, opts);
  }

  /** `append`, synchronously: one line, a few system calls (the hook appends on every call). */
  appendSync(rel: string, text: string, opts: { rotateOver?: number } = {}): void {
    const file = this.resolveForWriteSync(rel);
    mkdirSync(dirname(file), { recursive: true });
    if (opts.rotateOver !== undefined) {
      // Past the size, the file becomes `<file>.1` (the one before dropped) and a new one starts.
      const st = statOrUndefined(file);
      if (st !== undefined && st.isFile() && st.size > opts.rotateOver) renameSync(file, `${file}.1`);
    }
    appendToRegularFile(file, text, this.realRoot);
  }
}

function readLinkOrUndefined(file: string): string | undefined {
  try {
    return readlinkSync(file);
  } catch {
    return undefined;
  }
}
