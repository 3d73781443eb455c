import type { Agent } from '../agent';
import { copilotChatTranscript, copilotPromptLog } from './transcript';

export const copilot: Agent = {
  id: 'copilot',
  label: 'GitHub Copilot (VS Code)',
  eventAgent: copilotChatTranscript.agent,
  transcript: copilotChatTranscript,
  otherTranscripts: [copilotPromptLog],
};
