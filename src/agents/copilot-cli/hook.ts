import { copilotHookProtocol, LOCAL_CALLER } from '../copilotHooks';
import type { HookProtocol } from '../hook';

/**
 * GitHub Copilot CLI's hooks: the camelCase events the guardian registers in
 * `.github/hooks/loop-guardian.json`. The file and its entry are shared with Copilot in VS Code,
 * which reads the same file: `copilotHooks.ts` has both dialects, their sources and how the
 * hook tells them apart.
 */
export const copilotCliHook: HookProtocol = copilotHookProtocol(LOCAL_CALLER, { pre: 'preToolUse', post: ['postToolUse', 'postToolUseFailure'], prompt: 'userPromptSubmitted' });
