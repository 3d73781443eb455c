import type { Agent } from '../agent';
import { geminiDiscovery } from './discovery';
import { geminiHook } from './hook';
import { geminiTelemetry } from './telemetry';
import { geminiHookTrust } from './trust';
import { geminiSessionDocument, geminiTranscript } from './transcript';

export const gemini: Agent = {
  id: 'gemini',
  label: 'Gemini CLI',
  eventAgent: geminiTranscript.agent,
  transcript: geminiTranscript,
  otherTranscripts: [geminiSessionDocument],
  discovery: geminiDiscovery,
  hook: geminiHook,
  hookTrust: geminiHookTrust,
  telemetry: geminiTelemetry,
};
