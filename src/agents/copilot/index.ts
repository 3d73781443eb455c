import type { Agent } from '../agent';
import { copilotDiscovery } from './discovery';
import { copilotHook } from './hook';
import { copilotChatTranscript, copilotHookTranscript, copilotPromptLog } from './transcript';

export const copilot: Agent = {
  id: 'copilot',
  label: 'GitHub Copilot (VS Code)',
  eventAgent: copilotHookTranscript.agent,
  // Its hook transcripts, appended as it works: what discovery reads live.
  transcript: copilotHookTranscript,
  otherTranscripts: [copilotChatTranscript, copilotPromptLog],
  discovery: copilotDiscovery,
  hook: copilotHook,
};
