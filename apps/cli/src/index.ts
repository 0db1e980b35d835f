export { EXIT, CliError } from './exit-codes';
export { exitCodeOf } from './exit-status';
export { configDir, configPath, normaliseUrl, readConfig, type ConfigFile, type StoredLogin } from './config';
