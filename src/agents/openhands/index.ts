import type { Agent } from '../agent';
import { openHandsTranscript } from './transcript';

export const openHands: Agent = {
  id: 'openhands',
  label: 'OpenHands',
  eventAgent: openHandsTranscript.agent,
  transcript: openHandsTranscript,
};
