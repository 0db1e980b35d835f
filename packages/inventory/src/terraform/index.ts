export {
  countSkippedByType,
  createTerraformStateConnector,
  type TerraformStateConnectorOptions,
} from './connector';
export {
  parseTerraformState,
  SUPPORTED_TERRAFORM_TYPES,
  type ParseTerraformStateOptions,
  type SkippedTerraformResource,
  type SkipReason,
  type TerraformStateImport,
} from './parse';
export { TerraformShowJson, TerraformStateError, validateTerraformShowJson } from './schema';
