import type { Agent } from '../agent';
import { codexDiscovery } from './discovery';
import { codexHook } from './hook';
import { codexTelemetry } from './telemetry';
import { codexHookTrust } from './trust';
import { codexTranscript } from './transcript';

export const codex: Agent = {
  id: 'codex',
  label: 'Codex CLI',
  eventAgent: codexTranscript.agent,
  transcript: codexTranscript,
  discovery: codexDiscovery,
  hook: codexHook,
  hookTrust: codexHookTrust,
  telemetry: codexTelemetry,
};
