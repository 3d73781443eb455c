import * as path from 'node:path';
import * as vscode from 'vscode';
import { AGENTS } from '../agents';
import { appendTerminalExit } from '../state/terminalExits';
import type { GuardianService } from './guardianService';

/**
 * Records the exit code of each command that ends in a terminal an agent's harness created, as the
 * terminal's shell integration reports it (`window.onDidEndTerminalShellExecution`), in the folder
 * the command ran in (src/state/terminalExits.ts): the agent's hook reads it where its own payload
 * does not say how the command exited (an agent's `ownsTerminal`, src/agents/: docs/agents.md). A command with no
 * exit code (no shell integration, or one that did not report it), in no folder of the window, or in
 * an untrusted window is not recorded.
 */
export class AgentTerminalExits implements vscode.Disposable {
  private readonly listener: vscode.Disposable;

  constructor(private readonly service: GuardianService, private readonly log: vscode.LogOutputChannel) {
    this.listener = vscode.window.onDidEndTerminalShellExecution((e) => this.ended(e));
  }

  private ended(e: vscode.TerminalShellExecutionEndEvent): void {
    if (e.exitCode === undefined || !vscode.workspace.isTrusted) return;
    const options = e.terminal.creationOptions;
    const env = 'env' in options ? options.env : undefined;
    // Which agent's harness created the terminal, told by the environment it was created with.
    const agent = AGENTS.find((a) => a.ownsTerminal?.(env) === true)?.id;
    if (agent === undefined) return;
    const cwd = e.execution.cwd ?? e.shellIntegration.cwd;
    const guardian = cwd !== undefined && cwd.scheme === 'file' ? this.service.get(cwd) : undefined;
    if (guardian === undefined) return;
    try {
      appendTerminalExit(guardian.ws, { v: 1, ts: new Date().toISOString(), agent, command: e.execution.commandLine.value, exitCode: e.exitCode });
    } catch (err) {
      this.log.warn(`${path.basename(guardian.ws.root)}: the exit code of ${agent}'s terminal command could not be recorded: ${(err as Error).message}`);
    }
  }

  dispose(): void {
    this.listener.dispose();
  }
}
