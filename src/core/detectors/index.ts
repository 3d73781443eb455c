import type { Detector, DetectorContext } from '../detector';
import { ApiErrorStormDetector } from './api-error-storm';
import { BudgetDetector } from './budget';
import { CompactionThrashDetector } from './compaction-thrash';
import { CycleDetector } from './cycle';
import { FailingCallDetector } from './failing-call';
import { IdenticalCallsDetector } from './identical-calls';
import { IdenticalOutputDetector } from './identical-output';
import { OscillationDetector } from './oscillation';
import { QualityGateLoopDetector } from './quality-gate-loop';
import { ReDelegationDetector } from './re-delegation';
import { RepeatedErrorDetector } from './repeated-error';
import { RepeatedInvocationDetector } from './repeated-invocation';
import { RepeatedPromptDetector } from './repeated-prompt';
import { RetryExhaustionDetector } from './retry-exhaustion';
import { StuckTargetDetector } from './stuck-target';
import { StuckTierDetector } from './stuck-tier';
import { WindowedRepeatDetector } from './windowed-repeat';

/** Every detector, in the order their findings are listed when one event raises several. */
export function createDetectors(ctx: DetectorContext): Detector[] {
  return [
    new RepeatedInvocationDetector(ctx),
    new IdenticalCallsDetector(ctx),
    new RepeatedErrorDetector(ctx),
    new FailingCallDetector(ctx),
    new WindowedRepeatDetector(ctx),
    new CycleDetector(ctx),
    new IdenticalOutputDetector(ctx),
    new RetryExhaustionDetector(ctx),
    new OscillationDetector(ctx),
    new StuckTierDetector(ctx),
    new QualityGateLoopDetector(ctx),
    new BudgetDetector(ctx),
    new RepeatedPromptDetector(ctx),
    new ApiErrorStormDetector(ctx),
    new ReDelegationDetector(ctx),
    new StuckTargetDetector(ctx),
    new CompactionThrashDetector(ctx),
  ];
}
