export { AwsCollectError, createAwsConnector, type AwsConnectorOptions } from './aws.connector';
export type {
  AwsClientConfig,
  AwsClientCtor,
  AwsClientFactory,
  AwsCredentials,
  SdkClient,
} from './aws-clients';
