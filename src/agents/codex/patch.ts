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

/**
 * A shell command Codex does not run but applies itself as a patch: `apply_patch <<'EOF' … EOF`
 * (optionally after `cd <dir> &&`), as a script of `bash -lc`, or the argv `["apply_patch", <patch>]`
 * (openai/codex `codex-rs/apply-patch/src/lib.rs`, `maybe_parse_apply_patch`; the interception:
 * `codex-rs/core/src/tools/handlers/apply_patch.rs`, `intercept_apply_patch`). Real rollouts hold
 * this form (the shared corpus's Codex rollout: `shell` with `["bash", "-lc", "apply_patch
 * <<'PATCH'\n…"]`); seen live with 0.169.0, its hook gets it as a `Bash` call
 * `{command: "apply_patch <<'EOF'\n…"}`. Read as a shell line, the heredoc's last line (`EOF`)
 * would be taken for the command.
 */
const HEREDOC = /^\s*(?:cd\s+\S+\s*&&\s*)?apply_?patch\s*<<-?\s*(['"]?)(\w+)\1[ \t]*\n([\s\S]*?)\n\2\s*$/;

function shellPatch(args: Record<string, unknown>): string | undefined {
  const command = args.command ?? args.cmd;
  if (Array.isArray(command) && command.every((w) => typeof w === 'string')) {
    const argv = command as string[];
    if (argv.length === 2 && (argv[0] === 'apply_patch' || argv[0] === 'applypatch')) return argv[1];
    const script = argv.length === 3 && /(?:^|\/)(?:ba|z)?sh$/.test(argv[0] as string) && /^-l?c$/.test(argv[1] as string) ? argv[2] : undefined;
    return script === undefined ? undefined : HEREDOC.exec(script)?.[3];
  }
  return typeof command === 'string' ? HEREDOC.exec(command)?.[3] : undefined;
}

/**
 * A call's arguments in that shape when it is a patch: the apply_patch tool (its patch in
 * `command` from the hook, `input` in the rollout), or a shell call Codex applies as a patch
 * (`shellPatch`); any other call's as they are.
 */
export function codexCallArgs(tool: string | undefined, args: Record<string, unknown>): Record<string, unknown> {
  if (tool === APPLY_PATCH) {
    const patch = typeof args.command === 'string' ? args.command : typeof args.input === 'string' ? args.input : undefined;
    return patch === undefined ? args : patchArgs(patch);
  }
  const patch = shellPatch(args);
  return patch === undefined ? args : patchArgs(patch);
}
