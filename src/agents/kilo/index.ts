import type { Agent } from '../agent';
import { kiloDiscovery } from './discovery';
import { kiloTranscript } from './transcript';

/**
 * Kilo Code has no hooks: none in its extension before 7.x (Kilo-Org/kilocode-legacy @56b73d3b);
 * 7.x, an OpenCode fork, takes in-process plugins, not hook commands. It is watched, not enforced.
 */
export const kilo: Agent = {
  id: 'kilo',
  label: 'Kilo Code',
  eventAgent: kiloTranscript.agent,
  transcript: kiloTranscript,
  discovery: kiloDiscovery,
};
