import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { EventRef } from '../core/events';
import { lineText, sourcePlaces } from '../core/sourceLocation';
import { isWithin } from '../state/workspace';

/** A file of the workspace a loop is about, and where in it. */
export interface LoopSource {
  /** Absolute. */
  readonly file: string;
  /** 1-based, when the error says. */
  readonly line?: number;
  readonly column?: number;
}

/** The lines after a call's that may hold its result (an agent's transcript writes the result on a later line). */
const FOLLOWING = 3;
/** A line longer than this is read only this far (a long tool output names its file early). */
const MAX_LINE = 64 * 1024;

/** Lines `from`..`from+count-1` (1-based) of a file, read as a stream up to them. */
async function linesAt(file: string, from: number, count: number): Promise<string[]> {
  const out: string[] = [];
  const input = createReadStream(file, { encoding: 'utf8' });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of rl) {
      n++;
      if (n < from) continue;
      out.push(line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line);
      if (out.length >= count) break;
    }
  } finally {
    rl.close();
    input.destroy();
  }
  return out;
}

/**
 * The workspace file a loop is about: the first place its latest call (and its result) names that
 * is a file in the workspace: an error's `file(line,col)` / `file:line`, else the call's target.
 * Undefined when none is (the log stays the place).
 */
export async function loopSource(root: string, ref: EventRef): Promise<LoopSource | undefined> {
  const file = path.isAbsolute(ref.file) ? ref.file : path.join(root, ref.file);
  let lines: string[];
  try {
    lines = await linesAt(file, ref.line, 1 + FOLLOWING);
  } catch {
    return undefined;
  }
  for (const place of sourcePlaces(lines.map(lineText).join('\n'))) {
    const abs = path.resolve(root, place.path);
    if (!isWithin(root, abs) || abs === file) continue;
    // The guardian's own files and the agents' folders are not what a loop is about.
    const rel = path.relative(root, abs).split(path.sep).join('/');
    if (/^(?:\.tmp|\.git|node_modules|\.github\/guardian)\//.test(rel)) continue;
    const st = await fs.stat(abs).catch(() => undefined);
    if (!st?.isFile()) continue;
    return { file: abs, ...(place.line !== undefined ? { line: place.line } : {}), ...(place.column !== undefined ? { column: place.column } : {}) };
  }
  return undefined;
}
