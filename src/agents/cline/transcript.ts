import { isUiMessages, messagesOf, taskTranscript } from '../clineFamily';

export { textResultOutcome } from '../clineFamily';

const AGENT = 'cline';

/**
 * Cline's message files: a task's `api_conversation_history.json` and `ui_messages.json`
 * (`<globalStorage>/saoudrizwan.claude-dev/tasks/<id>/`), or the Cline SDK's session messages
 * `{version, sessionId, messages}` (`~/.cline/data/sessions/<id>/<id>.messages.json`). Read as the
 * Cline family's (`../clineFamily.ts`). Any message history or ui file of the family that its forks'
 * marks do not claim is read as Cline's, so this agent comes last in `--format auto`.
 */
export const clineTranscript = taskTranscript(AGENT, (doc) => messagesOf(doc) !== undefined || isUiMessages(doc));

