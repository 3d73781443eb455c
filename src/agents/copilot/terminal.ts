/*
 * The terminals VS Code creates for Copilot's agent (`run_in_terminal`) are created with an
 * environment that names them: `AI_AGENT=github_copilot_vscode_agent` and `COPILOT_AGENT=1`
 * (microsoft/vscode `src/vs/workbench/contrib/terminalContrib/chatAgentTools/browser/
 * toolTerminalCreator.ts`, `_createCopilotTerminal`; the same in VS Code 1.139.1's workbench.js),
 * and an extension sees that environment as the terminal's `creationOptions.env` (VS Code hands a
 * terminal's launch configuration, `env` included, to the extension host when it opens). A person's
 * own terminals have neither in their creation options.
 */
export function isCopilotAgentTerminal(env: Readonly<Record<string, string | null | undefined>> | undefined): boolean {
  return env?.AI_AGENT === 'github_copilot_vscode_agent' || env?.COPILOT_AGENT === '1';
}
