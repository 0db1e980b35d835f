export * from './plan';
export { parsePlan } from './parse';
export { parsePlanOffThread, closeParsePools, type ParseLimits } from './parse-pool';
export { PLAN_LIMITS } from './limits';
export { parsePlanText, cleanLines } from './parse-text';
export { parsePlanJson, isJsonPlan } from './parse-json';
export { PLAN_CHECKS, failedPlanChecks, type PlanCheck } from './plan-checks';
export { CONDITIONS, allowsStarStar, type Condition } from './conditions';
export { findDependents, type Dependent } from './live';
export {
  reviewPlan,
  reviewParsedPlan,
  type Annotation,
  type Citation,
  type PlanReview,
  type Risk as PlanRisk,
} from './review';
