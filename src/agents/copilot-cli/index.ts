import type { Agent } from '../agent';
import { copilotCliDiscovery } from './discovery';
import { copilotCliHook } from './hook';
import { copilotCliLegacyTranscript } from './legacy';
import { copilotCliTranscript } from './transcript';

export const copilotCli: Agent = {
  id: 'copilot-cli',
  label: 'GitHub Copilot CLI',
  eventAgent: copilotCliTranscript.agent,
  transcript: copilotCliTranscript,
  // Its oldest sessions (history-session-state/session_<id>_<ms>.json), read by `replay`.
  otherTranscripts: [copilotCliLegacyTranscript],
  discovery: copilotCliDiscovery,
  hook: copilotCliHook,
};
