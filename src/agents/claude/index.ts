import type { Agent } from '../agent';
import { claudeDiscovery } from './discovery';
import { claudeHook } from './hook';
import { claudeTelemetry } from './telemetry';
import { claudeTranscript } from './transcript';

export const claude: Agent = {
  id: 'claude',
  label: 'Claude Code',
  eventAgent: claudeTranscript.agent,
  transcript: claudeTranscript,
  discovery: claudeDiscovery,
  hook: claudeHook,
  telemetry: claudeTelemetry,
};
