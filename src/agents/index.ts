import type { Agent } from './agent';
import { claude } from './claude';
import { cline } from './cline';
import { codex } from './codex';
import { copilot } from './copilot';
import { copilotCli } from './copilot-cli';
import { cursor } from './cursor';
import { gemini } from './gemini';
import { kilo } from './kilo';
import { openCode } from './opencode';
import { openHands } from './openhands';
import { qwen } from './qwen';
import { roo } from './roo';
import { sweAgent } from './swe-agent';
import { windsurf } from './windsurf';
import type { HookProtocol } from './hook';
import type { Adapter, DocumentAdapter, JsonlAdapter } from './transcript';

export type { Agent, FolderTranscript, SessionDatabase, SessionRow, DiscoveryFs, DiscoveryScope, FoundTranscript, NotRunning, TranscriptDiscovery, TranscriptLocator, TrustScope } from './agent';

/**
 * The registry: every agent the guardian knows, the one list that `replay --format`, `hook`,
 * `init`, discovery, the configuration and the extension's commands take theirs from. Adding an
 * agent is adding its folder and a line here.
 */
export const AGENTS: readonly Agent[] = [claude, codex, gemini, copilot, copilotCli, cursor, windsurf, qwen, sweAgent, openHands, cline, roo, kilo, openCode];

/**
 * The order in which `--format auto` asks the agents whether a file is theirs: the formats with
 * the most specific first records first (a Codex rollout line or a Gemini chat's metadata would
 * also pass the looser Claude Code test). Roo Code's marks before Cline, which takes any file of
 * their family; Kilo Code's files cannot be told from Roo's, so Kilo, last, is reached only by name
 * (its database's sessions name it; its exports, like opencode's, are read as opencode's).
 */
const DETECTION_ORDER: readonly Agent[] = [codex, gemini, copilot, copilotCli, qwen, claude, cursor, sweAgent, openHands, openCode, roo, cline, kilo];

export type AgentWithHook = Agent & { readonly hook: HookProtocol };
export type AgentWithTranscript<A = JsonlAdapter | DocumentAdapter> = Agent & { readonly transcript: A };

/** The agents whose calls the hook can refuse. */
export const HOOK_AGENTS: readonly AgentWithHook[] = AGENTS.filter((a): a is AgentWithHook => a.hook !== undefined);

/** The agents whose transcripts the guardian reads: the formats of `replay --format`. */
export const TRANSCRIPT_AGENTS: readonly AgentWithTranscript[] = AGENTS.filter((a): a is AgentWithTranscript => a.transcript !== undefined);

/** Whether the guardian can find an agent's sessions by itself (its transcripts' places, or its database). */
export function isWatchable(agent: Agent): boolean {
  return agent.discovery !== undefined || agent.database !== undefined;
}

export function agentById(id: string): Agent | undefined {
  return AGENTS.find((a) => a.id === id);
}

/** The agent whose events carry this `agent` value (its id or its `eventAgent`). */
export function agentOfEvents(agent: string): Agent | undefined {
  return AGENTS.find((a) => a.eventAgent === agent) ?? agentById(agent);
}

export function hookAgent(id: string): AgentWithHook | undefined {
  return HOOK_AGENTS.find((a) => a.id === id);
}

/** Every shape of an agent's logs that the guardian reads: its transcript first. */
export function transcriptAdapters(agent: Agent): readonly Adapter[] {
  return [...(agent.transcript !== undefined ? [agent.transcript] : []), ...(agent.otherTranscripts ?? [])];
}

export interface Recognised<A extends Adapter> {
  readonly agent: Agent;
  readonly adapter: A;
}

/** The agent whose format a file is in, and which of its shapes, from the file's first record. */
export function sniffJsonl(first: Record<string, unknown>): Recognised<JsonlAdapter> | undefined {
  for (const agent of DETECTION_ORDER) {
    for (const adapter of transcriptAdapters(agent)) if (adapter.layout === 'jsonl' && adapter.sniffText === undefined && adapter.sniff(first)) return { agent, adapter };
  }
  return undefined;
}

/** The agent whose plain-text transcript a file is, from its first non-blank line. */
export function sniffTextLine(first: string): Recognised<JsonlAdapter> | undefined {
  for (const agent of DETECTION_ORDER) {
    for (const adapter of transcriptAdapters(agent)) if (adapter.layout === 'jsonl' && adapter.sniffText?.(first) === true) return { agent, adapter };
  }
  return undefined;
}

/** The agent whose format a parsed JSON document is in, and which of its shapes. */
export function sniffDocument(doc: unknown): Recognised<DocumentAdapter> | undefined {
  for (const agent of DETECTION_ORDER) {
    for (const adapter of transcriptAdapters(agent)) if (adapter.layout === 'document' && adapter.sniff(doc)) return { agent, adapter };
  }
  return undefined;
}
