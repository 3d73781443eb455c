/*
 * What the hook loads only when it must replay the session (its own bundle, dist/cli-gate.js, from
 * its own code cache): the engine with every detector, for a call that repeats an earlier one
 * (`judgeByReplay`) and for a prompt (`promptGate`). Most calls are decided without it
 * (`quickVerdict`); the transcript readers a prompt also needs are apart (turn.ts).
 */

export { judgeByReplay, promptGate } from '../core/gate';
export { unseenLoopVerdict } from '../core/unseenLoop';
