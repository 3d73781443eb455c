import type { Agent } from '../agent';
import { geminiDiscovery } from './discovery';
import { geminiHook } from './hook';
import { geminiTranscript } from './transcript';

export const gemini: Agent = {
  id: 'gemini',
  label: 'Gemini CLI',
  eventAgent: geminiTranscript.agent,
  transcript: geminiTranscript,
  discovery: geminiDiscovery,
  hook: geminiHook,
};
