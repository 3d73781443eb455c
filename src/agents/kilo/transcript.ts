import { forkShape, isUiMessages, messagesOf, taskTranscript } from '../clineFamily';

/**
 * Kilo Code's task files (the extension before 7.x, a Roo Code fork: Kilo-Org/kilocode-legacy
 * @56b73d3b, 5.10): `tasks/<id>/api_conversation_history.json` and `ui_messages.json`, with Roo's
 * shapes (XML or native calls by its `toolProtocol`; the ui file opens with `say: "text"`). They
 * cannot be told from Roo's by their content, so `--format auto` reads them as Roo's; `--format
 * kilo` reads them as Kilo's.
 */
export const kiloTranscript = taskTranscript('kilo-code', (doc) => forkShape(doc) || messagesOf(doc) !== undefined || isUiMessages(doc), { firstTextIsTask: true });
