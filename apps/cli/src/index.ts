export { EXIT, CliError, exitCodeOf } from './exit-codes';
export { configDir, configPath, normaliseUrl, readConfig, type ConfigFile, type StoredLogin } from './config';
