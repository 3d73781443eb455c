import { forkShape, taskTranscript } from '../clineFamily';

/**
 * Roo Code's task files, `tasks/<id>/api_conversation_history.json` and `ui_messages.json`: the
 * Cline family's shapes (`../clineFamily.ts`), with Roo's own marks: `tool_result` blocks answer its
 * native calls (errors as `{"status":"error",…}`, `src/core/prompts/responses.ts` @cb836567), XML
 * tags in text carried its calls until early 2026 (the real files in ../shared/fixtures/real/roo),
 * and the ui file opens with `say: "text"` holding the task (`Task.startTask`). Kilo Code's files
 * have the same marks: `--format auto` reads them as Roo's.
 */
export const rooTranscript = taskTranscript('roo-code', forkShape, { firstTextIsTask: true });
