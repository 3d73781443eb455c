import type { Agent } from '../agent';
import { clineTranscript } from './transcript';

export const cline: Agent = {
  id: 'cline',
  label: 'Cline',
  eventAgent: clineTranscript.agent,
  transcript: clineTranscript,
};
