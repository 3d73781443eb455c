import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import type { SkippedLine } from '../core/events';
import { isWithin, PATHS, type Workspace } from '../state/workspace';

const SKIP_DIRS = new Set(['node_modules', '.git']);
const MAX_DEPTH = 16;
const MAX_ENTRIES = 50_000;

/** The folder a glob starts in: its segments before the first one with a wildcard. */
export function globBase(glob: string): string {
  const segments = glob.split('/');
  const base: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (/[*?[\]{}!()]/.test(s)) break;
    base.push(s);
  }
  return base.join('/');
}

/** Whether a glob could reach outside the workspace: absolute, or with a `..` segment anywhere. */
export function globEscapes(glob: string): boolean {
  return path.posix.isAbsolute(glob) || path.win32.isAbsolute(glob) || glob.split(/[\\/]/).includes('..');
}

/** Whether the file (after every link) is inside the workspace. */
export async function resolvesInside(ws: Workspace, rel: string): Promise<boolean> {
  const real = await fs.realpath(ws.path(rel)).catch(() => undefined);
  // A path that does not resolve (a dangling link, a link loop) is left to the reader to report.
  return real === undefined || isWithin(ws.realRoot, real);
}

/**
 * Workspace-relative files matching any of the globs (dot folders such as `.tmp` included), never
 * a file outside the workspace: a glob that could reach outside (absolute, `..`) is refused, and a
 * matched file that resolves outside (through a link) is skipped; both are reported to `onRefused`
 * (the glob as the config key it comes from, the file by its path). Symbolic links to folders are
 * not followed.
 */
export async function discoverFiles(ws: Workspace, globs: readonly string[], onRefused?: (skip: SkippedLine) => void): Promise<string[]> {
  const usable: string[] = [];
  globs.forEach((glob, i) => {
    if (!globEscapes(glob)) usable.push(glob);
    else onRefused?.({ file: PATHS.config, line: 1, field: `sources.events[${i}]`, reason: `${JSON.stringify(glob)} reaches outside the workspace (a glob is relative to it, without ".."); refused` });
  });
  const matchers = usable.map((g) => picomatch(g, { dot: true }));
  const found = new Set<string>();
  let entries = 0;
  const visited = new Set<string>();
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || entries > MAX_ENTRIES || visited.has(rel)) return;
    visited.add(rel);
    let dirents;
    try {
      dirents = await fs.readdir(ws.path(rel || '.'), { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of dirents) {
      entries++;
      const child = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        if (!SKIP_DIRS.has(d.name)) await walk(child, depth + 1);
      } else if (matchers.some((m) => m(child))) {
        // Links, FIFOs and the like too: the reader reports what it cannot read, rather than it going unseen.
        found.add(child);
      }
    }
  };
  for (const base of new Set(usable.map(globBase))) await walk(base === '' ? '' : path.posix.normalize(base), 0);
  const inside: string[] = [];
  for (const rel of [...found].sort()) {
    if (await resolvesInside(ws, rel)) inside.push(rel);
    else onRefused?.({ file: rel, line: 1, field: '(file)', reason: 'resolves outside the workspace (through a link); skipped' });
  }
  return inside;
}
