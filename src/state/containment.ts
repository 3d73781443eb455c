import { isAbsolute, relative } from 'node:path';

/** Whether `target` is `root` or lies below it (both absolute). */
export function isWithin(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export class WorkspaceEscapeError extends Error {
  constructor(readonly requested: string, readonly root: string) {
    super(`refused: ${requested} resolves outside the workspace ${root}`);
    this.name = 'WorkspaceEscapeError';
  }
}
