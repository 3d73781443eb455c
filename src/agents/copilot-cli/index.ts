import type { Agent } from '../agent';
import { copilotCliDiscovery } from './discovery';
import { copilotCliHook } from './hook';
import { copilotCliTranscript } from './transcript';

export const copilotCli: Agent = {
  id: 'copilot-cli',
  label: 'GitHub Copilot CLI',
  eventAgent: copilotCliTranscript.agent,
  transcript: copilotCliTranscript,
  discovery: copilotCliDiscovery,
  hook: copilotCliHook,
};
