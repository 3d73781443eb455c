import type { Agent } from '../agent';
import { windsurfHook } from './hook';

/**
 * Windsurf's Cascade: enforced through its hooks. Its trajectories are kept as encrypted protobuf
 * (`~/.codeium/windsurf/cascade/*.pb`), not readable; the JSONL transcript its
 * `post_cascade_response_with_transcript` hook writes (`~/.windsurf/transcripts/<trajectory>.jsonl`)
 * exists only while such a hook is configured, and its step shapes are documented by example only
 * and "may change": not read (../shared/docs/vscode-agents.md, sections 5 and 8).
 */
export const windsurf: Agent = {
  id: 'windsurf',
  label: 'Windsurf (Cascade)',
  eventAgent: 'windsurf',
  hook: windsurfHook,
};
