import type { Agent } from '../agent';
import { copilotChatSessionLog } from './chatSessionLog';
import { copilotDiscovery } from './discovery';
import { copilotHook } from './hook';
import { isCopilotAgentTerminal } from './terminal';
import { copilotChatTranscript, copilotHookTranscript, copilotPromptLog } from './transcript';

export const copilot: Agent = {
  id: 'copilot',
  label: 'GitHub Copilot (VS Code)',
  eventAgent: copilotHookTranscript.agent,
  // Its hook transcripts, appended as it works, and VS Code's own session logs (discovery says
  // which file is which): what discovery reads live.
  transcript: copilotHookTranscript,
  otherTranscripts: [copilotChatSessionLog, copilotChatTranscript, copilotPromptLog],
  discovery: copilotDiscovery,
  hook: copilotHook,
  ownsTerminal: isCopilotAgentTerminal,
};
