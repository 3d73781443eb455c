import { copilotEventLog, isCopilotJsonOutput, isCopilotSessionStart } from '../copilotEvents';
import { isObject } from '../transcript';

/**
 * Copilot CLI's session logs: a Copilot event log whose start names no VS Code (that is Copilot
 * Chat's hook transcript); and what `copilot -p … --output-format json` prints, saved to a file (the
 * same events, without `session.start`, with the live view's ephemeral ones).
 */
export const copilotCliTranscript = copilotEventLog('copilot-cli', (first) => (isCopilotSessionStart(first) && !(isObject(first.data) && 'vscodeVersion' in first.data)) || isCopilotJsonOutput(first));
