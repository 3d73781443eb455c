import type { Agent } from '../agent';
import { openHandsOutputTranscript, openHandsTranscript } from './transcript';

export const openHands: Agent = {
  id: 'openhands',
  label: 'OpenHands',
  eventAgent: openHandsTranscript.agent,
  transcript: openHandsTranscript,
  otherTranscripts: [openHandsOutputTranscript],
};
