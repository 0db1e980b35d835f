export {
  countSkippedByType,
  createTerraformStateConnector,
  type TerraformStateConnectorOptions,
  type TerraformStateReadResult,
} from './connector';
export {
  DEFAULT_S3_REGION,
  parseS3Url,
  readStateSource,
  sourceName,
  type S3ClientFactory,
  type StateRead,
  type TerraformStateSource,
} from './sources';
export { REDACTED } from './redact';
export {
  parseTerraformState,
  MAPPED_TERRAFORM_TYPES,
  SUPPORTED_TERRAFORM_TYPES,
  type ParseTerraformStateOptions,
  type SkippedTerraformResource,
  type SkipReason,
  type TerraformStateImport,
} from './parse';
export {
  TerraformShowJson,
  TerraformStateError,
  validateTerraformShowJson,
  validateTerraformState,
} from './schema';
