/**
 * Tiny option reading for the examples: `--name value` on the command line wins, then the
 * environment variable, then the default. Secrets are best given through the environment, so
 * they stay out of shell history and process listings.
 */
export function option(name: string, env?: string, fallback?: string): string | undefined {
  const argv = process.argv.slice(2);
  const at = argv.indexOf(`--${name}`);
  if (at !== -1 && argv[at + 1] !== undefined) return argv[at + 1];
  if (env && process.env[env]) return process.env[env];
  return fallback;
}

export function required(name: string, env?: string): string {
  const value = option(name, env);
  if (!value) {
    console.error(`Missing --${name}${env ? ` (or ${env})` : ''}.`);
    process.exit(2);
  }
  return value;
}
