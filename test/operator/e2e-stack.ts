import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';

/** One e2e file's stand-in stack, in a folder of its own that goes with it on close. */
export interface E2eStack {
  dir: string;
  stack: LocalStack;
  api: OperatorKubeApi;
  close(): Promise<void>;
}

/**
 * Starts the stand-in (API server, local node, operator) for an end-to-end file. `name` names the
 * temporary folder; `ipPrefix` keeps the file's pod and Service addresses apart from other files'.
 */
export async function startE2eStack(name: string, options: Omit<LocalStackOptions, 'dir' | 'operatorVersion'>): Promise<E2eStack> {
  const dir = mkdtempSync(join(tmpdir(), `keelson-${name}-`));
  chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ ...options, dir, operatorVersion: '0.1.0' });
  } catch (error) {
    removeDir();
    throw error;
  }
  return {
    dir,
    stack,
    api: new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath })),
    close: async () => {
      await stack.close();
      // KEELSON_E2E_KEEP=1 keeps the pods' folders and logs for a look after a failure.
      if (process.env.KEELSON_E2E_KEEP === '1') process.stderr.write(`# kept ${dir}\n`);
      else removeDir();
    },
  };
}
