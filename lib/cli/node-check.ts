/**
 * Refuses a Node.js older than the one Keelson supports, with a message instead of a crash: on
 * Node 20 the admin's password hashing (argon2's native module) ends the process with a
 * segmentation fault. Imported first by every entry point, before any other module is loaded.
 * Keep in step with package.json "engines".
 */
export const minimumNodeMajor = 22;

export function unsupportedNodeMessage(version: string, execPath: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (Number.isInteger(major) && major >= minimumNodeMajor) return undefined;
  return (
    `keelson needs Node.js ${minimumNodeMajor} or newer; this is ${version} (${execPath}).\n` +
    'Run it through npm from the checkout (npm run keelson -- ..., npm run local:up), which uses the Node.js that npm ci installed, or install Node.js 22 or newer.\n'
  );
}

const refusal = unsupportedNodeMessage(process.version, process.execPath);
if (refusal) {
  process.stderr.write(refusal);
  process.exit(1);
}
