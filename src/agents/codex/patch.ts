/**
 * Codex's `apply_patch` call, as the guardian compares it: the patch and the files it changes.
 *
 * Codex hands the same patch over in two shapes (seen live with 0.169.0, the freeform tool that
 * its catalog gives a model with `apply_patch_tool_type: "freeform"`):
 * - to its hooks, `tool_name: "apply_patch"` with `tool_input: {"command": "<the patch>"}`
 *   (openai/codex `codex-rs/core/src/tools/handlers/apply_patch.rs`, its hook payload);
 * - in its rollout, a `custom_tool_call {name: "apply_patch", input: "<the patch>"}` (or, for the
 *   JSON form of the tool, a `function_call` whose arguments are `{"input": "<the patch>"}`).
 * Read as they come, the hook's `command` would be taken for a shell command line (every patch
 * one "command", its last line `*** End Patch`) and the rollout's `input` for one tool with no
 * target: neither says what the call works on. Both are read here into one shape, so that the
 * hook and `scan`/`replay` judge one call alike: `patch` (the whole text: identical patches are
 * identical calls) and `path`, the files its `*** Add/Update/Delete File:` headers name (patches
 * to one file are one thing tried, as Edit and Write refused alike on one file are).
 * The patch format: openai/codex `codex-rs/apply-patch/apply_patch_tool_instructions.md`.
 */
const FILE_HEADER = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

export const APPLY_PATCH = 'apply_patch';

export function patchArgs(patch: string): Record<string, unknown> {
  const files = [...new Set([...patch.matchAll(FILE_HEADER)].map((m) => (m[1] as string).trim()))];
  return { patch, ...(files.length > 0 ? { path: files.join(', ') } : {}) };
}

/** A call's arguments in that shape when it is an apply_patch whose patch is in `key`; else as they are. */
export function codexCallArgs(tool: string | undefined, args: Record<string, unknown>): Record<string, unknown> {
  if (tool !== APPLY_PATCH) return args;
  const patch = typeof args.command === 'string' ? args.command : typeof args.input === 'string' ? args.input : undefined;
  return patch === undefined ? args : patchArgs(patch);
}
