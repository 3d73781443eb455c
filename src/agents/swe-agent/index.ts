import type { Agent } from '../agent';
import { sweAgentTranscript } from './transcript';

export const sweAgent: Agent = {
  id: 'swe-agent',
  label: 'SWE-agent',
  eventAgent: sweAgentTranscript.agent,
  transcript: sweAgentTranscript,
};
