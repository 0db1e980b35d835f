export * from './plan';
export { parsePlan } from './parse';
export { parsePlanText, cleanLines } from './parse-text';
export { parsePlanJson, isJsonPlan } from './parse-json';
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
