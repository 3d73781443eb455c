import { CLI_CALLER, copilotHookProtocol } from '../copilotHooks';
import type { HookProtocol } from '../hook';

/**
 * Copilot's agent mode in VS Code (the Local harness): VS Code's PreToolUse / PostToolUse
 * contract, read from the repository's `.github/hooks/*.json`. The guardian's entry there is the
 * one Copilot CLI reads too, so `init copilot` and `init copilot-cli` write the same file and
 * never a second entry; the hook answers each caller in its own dialect (`copilotHooks.ts`).
 * No failure event: `PostToolUse` fires only for a call that returned; a call that threw is
 * settled from Copilot's transcript at the next hook call (`failuresInTranscript`), and a terminal
 * command's exit code from VS Code's `Command exited with code N` line, or, where VS Code leaves it
 * out, from the terminal's shell integration, as the extension recorded it (`terminalCommands`).
 */
export const copilotHook: HookProtocol = copilotHookProtocol(CLI_CALLER, { pre: 'PreToolUse', post: ['PostToolUse'], prompt: 'UserPromptSubmit' });
