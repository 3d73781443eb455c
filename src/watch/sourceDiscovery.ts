import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import type { Workspace } from '../state/workspace';

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

/**
 * Workspace-relative files matching any of the globs (dot folders such as `.tmp` included).
 * Symbolic links to folders are not followed, so a link cannot pull in files from elsewhere.
 */
export async function discoverFiles(ws: Workspace, globs: readonly string[]): Promise<string[]> {
  const matchers = globs.map((g) => picomatch(g, { dot: true }));
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
      } else if ((d.isFile() || d.isSymbolicLink()) && matchers.some((m) => m(child))) {
        found.add(child);
      }
    }
  };
  for (const base of new Set(globs.map(globBase))) await walk(base === '' ? '' : path.posix.normalize(base), 0);
  return [...found].sort();
}
