import { PATHS, type Workspace } from './workspace';

/** Seed 000: on halt, the diagnostic JSON goes to `.tmp/current/logs/infinite-loop-<timestamp>.json`. */
export async function archiveLoopDiagnostic(ws: Workspace, diagnostic: unknown, at = new Date()): Promise<string> {
  const stamp = at.toISOString().replace(/[:.]/g, '-');
  const rel = `${PATHS.logsDir}/infinite-loop-${stamp}.json`;
  await ws.writeAtomic(rel, `${JSON.stringify(diagnostic, null, 2)}\n`);
  return rel;
}
