import { parseJson } from '../core/json';
import { openRegularFileSync, readTailTextSync } from './regularFile';
import { PATHS, type Workspace } from './workspace';

/*
 * The exit codes of the commands an agent's terminals ran, as the editor's shell integration
 * reported them: the extension writes one line per command that ended in a terminal an agent's
 * harness created (`src/vscode/agentTerminalExits.ts`), the hook reads them to know how a terminal
 * call ended where the agent's hook payload does not say (the agents whose `ownsTerminal` tells
 * their terminals, src/agents/: docs/agents.md).
 * A small log in the guardian's own folder, rotated past its size; a line that is not a record is
 * skipped.
 */

export const TERMINAL_EXITS = `${PATHS.guardianDir}/terminal-exits.jsonl`;
/** Past this size the log starts again (the one before kept as `.1`): a record is read within seconds of being written. */
const MAX_BYTES = 256 * 1024;
/** How much of the log's end is read: far more than the commands of the last minutes. */
const TAIL_BYTES = 64 * 1024;

export interface TerminalExit {
  readonly v: 1;
  /** When the command ended (ISO), as the extension heard of it. */
  readonly ts: string;
  /** The agent whose harness created the terminal (its id in the agents' registry). */
  readonly agent: string;
  /** The command line as the shell reported it. */
  readonly command: string;
  /** The exit code the shell reported. */
  readonly exitCode: number;
}

export function appendTerminalExit(ws: Workspace, exit: TerminalExit): void {
  ws.appendSync(TERMINAL_EXITS, `${JSON.stringify(exit)}\n`, { rotateOver: MAX_BYTES });
}

function isExit(v: unknown): v is TerminalExit {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  return e.v === 1 && typeof e.ts === 'string' && !Number.isNaN(Date.parse(e.ts)) && typeof e.agent === 'string' && typeof e.command === 'string' && typeof e.exitCode === 'number' && Number.isInteger(e.exitCode);
}

/** The records at the end of the log, oldest first; none when it cannot be read. Lines that are not records are left out. */
export function readTerminalExits(ws: Workspace): TerminalExit[] {
  let fd: number;
  try {
    fd = openRegularFileSync(ws.path(TERMINAL_EXITS), TERMINAL_EXITS);
  } catch {
    return [];
  }
  const { text, start } = readTailTextSync(fd, TAIL_BYTES);
  // A tail that starts mid-line: its first, partial line is not a record.
  const lines = text.split('\n').slice(start > 0 ? 1 : 0);
  const out: TerminalExit[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const parsed = parseJson(line);
    if (parsed.ok && isExit(parsed.value)) out.push(parsed.value);
  }
  return out;
}
