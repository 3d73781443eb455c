/**
 * A shell command that fails is still a `success` to Gemini CLI: the tool's text for the model is
 * "Output: …", then "Error: …", "Exit Code: N" (only when not 0), "Signal: …", "Background PIDs: …"
 * and "Process Group PGID: N", one section a line (google-gemini/gemini-cli
 * `packages/core/src/tools/shell.ts`, `llmContentParts`), sometimes wrapped in
 * `<untrusted_context>`; the hook gets it as `llmContent`, the chat file as the function
 * response's `output` (both seen in Gemini CLI 0.61.0's own runs here). The PGID and PIDs change
 * every run: not part of the outcome.
 */
const EXIT = /^Exit Code: (-?\d+)\s*$/m;
const VOLATILE_SECTIONS = /^(?:Process Group PGID|Background PIDs): .*$\n?/gm;

/** The failure a shell result's text tells (its text without what changes every run), or undefined when it exited 0 or is no shell result. */
export function shellFailure(text: string): string | undefined {
  const code = EXIT.exec(text);
  if (code === null || Number(code[1]) === 0) return undefined;
  return text.replace(VOLATILE_SECTIONS, '').replace(/<\/?untrusted_context>\n?/g, '').trim();
}
