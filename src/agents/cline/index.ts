import type { Agent } from '../agent';
import { clineDataDiscovery, clineDiscovery } from './discovery';
import { clineHook } from './hook';
import { clineTranscript } from './transcript';

export const cline: Agent = {
  id: 'cline',
  label: 'Cline',
  eventAgent: clineTranscript.agent,
  transcript: clineTranscript,
  discovery: clineDiscovery,
  otherDiscovery: [clineDataDiscovery],
  hook: clineHook,
};
