import { fs } from '../builtins.js';

/** The package version, read from the package.json that ships beside the code (source, dist, or the stand-in's compiled cache one level deeper). */
export function packageVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json', '../../../../package.json']) {
    try {
      const pkg = JSON.parse(fs.readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'keelson' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate location
    }
  }
  return '0.0.0-unknown';
}
