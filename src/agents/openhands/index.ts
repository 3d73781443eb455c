import type { Agent } from '../agent';
import { openHandsOutputTranscript, openHandsTranscript } from './transcript';
import { openHandsV1Folder, openHandsV1Transcript } from './v1';

export const openHands: Agent = {
  id: 'openhands',
  label: 'OpenHands',
  eventAgent: openHandsTranscript.agent,
  transcript: openHandsTranscript,
  otherTranscripts: [openHandsOutputTranscript, openHandsV1Transcript],
  folderTranscript: openHandsV1Folder,
};
