import { copilotEventLog, isCopilotSessionStart } from '../copilotEvents';
import { isObject } from '../transcript';

/** Copilot CLI's session logs: a Copilot event log whose start names no VS Code (that is Copilot Chat's hook transcript). */
export const copilotCliTranscript = copilotEventLog('copilot-cli', (first) => isCopilotSessionStart(first) && !(isObject(first.data) && 'vscodeVersion' in first.data));

