import type { Agent } from '../agent';
import { rooDiscovery } from './discovery';
import { rooTranscript } from './transcript';

/** Roo Code has no hooks (none in RooCodeInc/Roo-Code @cb836567, 3.52): it is watched, not enforced. */
export const roo: Agent = {
  id: 'roo',
  label: 'Roo Code',
  eventAgent: rooTranscript.agent,
  transcript: rooTranscript,
  discovery: rooDiscovery,
};
